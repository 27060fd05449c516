import Dispatch
import Foundation
@_exported import SwitchboardReference
import SwitchboardCore

/// Settings that hold for the whole life of a client (`AgoraRtmClientConfig`).
public final class RtmClientConfig: NSObject {
    /// The app id.
    public var appId: String
    /// The user id; unique per user or device.
    public var userId: String
    /// Whether user ids are strings (`true`) or numeric strings (`false`).
    public var useStringUserId: Bool = true
    /// Whether the ISP domain policy restriction is on (accepted, no effect on a self-hosted server).
    public var ispPolicyEnabled: Bool = false
    /// Dual-network transmission (accepted, no effect on a self-hosted server).
    public var multipath: Bool = false
    /// Seconds the server waits for a lost client before telling others, in [5, 300].
    public var presenceTimeout: UInt32 = 300
    /// Seconds between heartbeats, in [5, 1800].
    public var heartbeatInterval: UInt32 = 5
    /// Seconds to keep trying to connect: 0 for ever, otherwise [15, 3600].
    public var reconnectTimeout: UInt32 = 0
    /// Service area (accepted, no effect on a self-hosted server).
    public var areaCode: RtmAreaCode = .GLOB
    /// Proxy settings: an `http` proxy is reached with `CONNECT`; `cloudTcp` has no effect.
    public var proxyConfig: RtmProxyConfig?
    /// Transport protocol choice (accepted; Switchboard always uses TCP).
    public var protocolType: RtmProtocolType = .tcpUdp
    /// Log settings: the SDK's `agora.log` in `filePath`, at `level` and above, `fileSizeInKB` at most.
    public var logConfig: RtmLogConfig?
    /// Client-side encryption settings.
    public var encryptionConfig: RtmEncryptionConfig?
    /// Private deployment settings: `accessPointHosts` names the Switchboard server (without
    /// any, the client uses `SWITCHBOARD_URL` from the environment, else `ws://127.0.0.1:9100`).
    public var privateConfig: RtmPrivateConfig?
    /// The queue delegate callbacks run on. On Linux `nil` means a private serial queue, because a
    /// command-line program's main queue does not run; on Apple platforms `nil` means the main queue.
    public var callbackQueue: DispatchQueue?

    /// Creates a configuration; every argument after `userId` has the reference's default.
    public init(
        appId: String, userId: String, useStringUserId: Bool = true, ispPolicyEnabled: Bool = false,
        multipath: Bool = false, presenceTimeout: UInt32 = 300, heartbeatInterval: UInt32 = 5,
        reconnectTimeout: UInt32 = 0, areaCode: RtmAreaCode = .GLOB, proxyConfig: RtmProxyConfig? = nil,
        protocolType: RtmProtocolType = .tcpUdp, logConfig: RtmLogConfig? = nil,
        encryptionConfig: RtmEncryptionConfig? = nil, privateConfig: RtmPrivateConfig? = nil
    ) {
        self.appId = appId
        self.userId = userId
        self.useStringUserId = useStringUserId
        self.ispPolicyEnabled = ispPolicyEnabled
        self.multipath = multipath
        self.presenceTimeout = presenceTimeout
        self.heartbeatInterval = heartbeatInterval
        self.reconnectTimeout = reconnectTimeout
        self.areaCode = areaCode
        self.proxyConfig = proxyConfig
        self.protocolType = protocolType
        self.logConfig = logConfig
        self.encryptionConfig = encryptionConfig
        self.privateConfig = privateConfig
    }
}

/// Local log settings (`AgoraRtmLogConfig`).
public final class RtmLogConfig: NSObject {
    /// The folder of the log file `agora.log`, or the file itself when it ends in `.log`;
    /// empty writes no file.
    public var filePath: String = ""
    /// Log file size in KB, clamped to [128, 1024].
    public var fileSizeInKB: Int32 = 1024 {
        didSet { fileSizeInKB = min(max(fileSizeInKB, 128), 1024) }
    }
    /// Output level.
    public var level: RtmLogLevel = .info

    /// Creates the defaults.
    public override init() {}
}

/// Proxy settings (`AgoraRtmProxyConfig`).
public final class RtmProxyConfig: NSObject {
    /// Proxy type.
    public var proxyType: RtmProxyType = .none
    /// Proxy host name or IP address.
    public var server: String = ""
    /// Proxy port.
    public var port: UInt16 = 0
    /// Proxy account.
    public var account: String = ""
    /// Proxy password.
    public var password: String = ""

    /// Creates the defaults (no proxy).
    public override init() {}

    /// Creates proxy settings for `server`.
    public init(server: String, port: UInt16 = 0, proxyType: RtmProxyType = .none) {
        self.server = server
        self.port = port
        self.proxyType = proxyType
    }
}

/// Client-side encryption settings (`AgoraRtmEncryptionConfig`).
public final class RtmEncryptionConfig: NSObject {
    /// The mode.
    public var encryptionMode: RtmEncryptionMode = .none
    /// The key string.
    public var encryptionKey: String = ""
    /// The 32-byte salt.
    public var encryptionKdfSalt: Data = Data()

    /// Creates the defaults (no encryption).
    public override init() {}
}

/// Private deployment settings (`AgoraRtmPrivateConfig`).
public final class RtmPrivateConfig: NSObject {
    /// Service types.
    public var serviceType: RtmServiceType = [.message, .stream]
    /// Server addresses: `ws://host:port`, `wss://host:port` or `host:port`. A `wss://` server
    /// must present a certificate that is valid for its host name and trusted by the system or
    /// by `tlsCAFile`. Empty: `SWITCHBOARD_URL` from the environment, else `ws://127.0.0.1:9100`.
    public var accessPointHosts: [String] = []
    /// Switchboard extension: a PEM file of CA certificates to trust for `wss://` servers, in
    /// addition to the system's, for self-signed development certificates.
    public var tlsCAFile: String?
    /// Switchboard extension: the transport the connection goes through. `automatic` (the
    /// default) is URLSession on Apple platforms and the epoll client on Linux.
    public var transport: RtmTransport = .automatic

    /// Creates the defaults.
    public override init() {}
}
