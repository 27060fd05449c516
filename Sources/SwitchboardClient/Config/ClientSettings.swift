import Dispatch
import Foundation
import SwitchboardCore

/// The immutable copy of a configuration that a client runs with.
struct ClientSettings: Sendable {
    var appId: String
    var userId: String
    var presenceTimeout: Int
    var heartbeatInterval: Int
    var reconnectTimeout: Int
    var servers: [ServerAddress]
    var encryption: EncryptionSettings?
    /// A PEM file of CA certificates trusted for `wss://` servers besides the system's.
    var caFile: String?
    /// The HTTP proxy to connect through (`proxyConfig` with type `http`); nil for none.
    var proxy: ProxySettings?
    /// The services the app uses (`privateConfig.serviceType`): a call of another service is
    /// refused with `serviceNotSupport` (-10022).
    var services: RtmServiceType
    /// The transport the connection goes through (`privateConfig.transport`).
    var transport: TransportChoice
    /// The SDK log file (`logConfig`); nil when none is written.
    var log: LogFile.Settings?
    /// What the configuration left to a default the app may not expect, written to the log at
    /// warning level when the client starts.
    var warnings: [String] = []

    struct EncryptionSettings: Sendable {
        var mode: RtmEncryptionMode
        var key: String
        var salt: [UInt8]
    }

    /// The server a client uses when `accessPointHosts` names none and `SWITCHBOARD_URL` is unset:
    /// `switchboard serve` with its defaults on this machine.
    static let defaultServer = "ws://127.0.0.1:9100"
    /// The environment variable that names the server when `accessPointHosts` names none.
    static let serverVariable = "SWITCHBOARD_URL"

    /// Checks and copies `config` (values out of range are clamped, as the reference does).
    /// Without `privateConfig.accessPointHosts` the server is `SWITCHBOARD_URL` from
    /// `environment`, else `defaultServer`.
    init(
        _ config: RtmClientConfig, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(RtmErrorInfo) {
        guard !config.appId.isEmpty else {
            throw RtmErrorInfo(.invalidAppId, operation: OperationName.Session.initialize, reason: "appId is empty")
        }
        do {
            try Validation.checkUserId(config.userId, limits: Limits(), operation: OperationName.Session.initialize.rawValue)
        } catch {
            throw RtmErrorInfo(error)
        }
        if !config.useStringUserId, UInt64(config.userId) == nil {
            throw RtmErrorInfo(.invalidUserId, operation: OperationName.Session.initialize, reason: "useStringUserId is false but userId is not numeric")
        }
        appId = config.appId
        userId = config.userId
        let limits = Limits()
        presenceTimeout = limits.sessions.clampedPresenceTimeout(Int(config.presenceTimeout))
        heartbeatInterval = limits.sessions.clampedHeartbeatInterval(Int(config.heartbeatInterval))
        let reconnect = Int(config.reconnectTimeout)
        reconnectTimeout = reconnect == 0 ? 0 : min(max(reconnect, 15), 3600)
        var hosts = config.privateConfig?.accessPointHosts ?? []
        if hosts.isEmpty {
            if let named = environment[Self.serverVariable], !named.isEmpty {
                hosts = [named]
                warnings.append("privateConfig.accessPointHosts is empty: using \(Self.serverVariable), \(named)")
            } else {
                hosts = [Self.defaultServer]
                warnings.append(
                    "privateConfig.accessPointHosts is empty and \(Self.serverVariable) is unset: using the local default, \(Self.defaultServer)")
            }
        }
        var servers: [ServerAddress] = []
        for host in hosts {
            guard let address = ServerAddress(host) else {
                throw RtmErrorInfo(
                    .invalidPrivateConfig, operation: OperationName.Session.initialize, reason: "cannot read server address \(host)")
            }
            servers.append(address)
        }
        self.servers = servers
        services = config.privateConfig?.serviceType ?? [.message, .stream]
        caFile = config.privateConfig?.tlsCAFile
        transport = try Self.transportChoice(config.privateConfig?.transport ?? .automatic)
        proxy = try Self.httpProxy(config.proxyConfig)
        log = LogFile.Settings(config.logConfig)
        if let encryption = config.encryptionConfig, encryption.encryptionMode != .none {
            guard !encryption.encryptionKey.isEmpty, encryption.encryptionKdfSalt.count == 32 else {
                throw RtmErrorInfo(
                    .invalidEncryptionParameter, operation: OperationName.Session.initialize,
                    reason: "encryption needs a non-empty key and a 32-byte salt")
            }
            self.encryption = EncryptionSettings(
                mode: encryption.encryptionMode, key: encryption.encryptionKey, salt: Array(encryption.encryptionKdfSalt))
        }
    }
}

extension ClientSettings {
    /// The proxy of an `http` `proxyConfig`, with credentials when `account` is set. The
    /// hosted service's `cloudTcp` proxy has no meaning for a self-hosted server: no proxy.
    static func httpProxy(_ config: RtmProxyConfig?) throws(RtmErrorInfo) -> ProxySettings? {
        guard let config, config.proxyType == .http else { return nil }
        guard !config.server.isEmpty, config.port != 0 else {
            throw RtmErrorInfo(
                .invalidParameter, operation: OperationName.Session.initialize,
                reason: "an http proxyConfig needs the proxy's server and port")
        }
        return ProxySettings(
            host: config.server, port: Int(config.port), username: config.account.isEmpty ? nil : config.account,
            password: config.password)
    }
}

/// An HTTP proxy reached with `CONNECT`, as `RtmProxyConfig` names it.
struct ProxySettings: Sendable, Equatable {
    var host: String
    var port: Int
    /// The account for `Proxy-Authorization: Basic`; nil for none.
    var username: String?
    var password: String = ""
}

/// A server to connect to, read from `accessPointHosts`.
struct ServerAddress: Sendable, Hashable {
    var secure: Bool
    var host: String
    var port: Int
    var path: String

    /// The WebSocket URL.
    var url: String { "\(secure ? "wss" : "ws")://\(host):\(port)\(path)" }

    /// Reads `ws://host:port/path`, `wss://…` or a bare `host:port`.
    init?(_ text: String) {
        var rest = Substring(text)
        secure = false
        if rest.hasPrefix("wss://") {
            secure = true
            rest = rest.dropFirst(6)
        } else if rest.hasPrefix("ws://") {
            rest = rest.dropFirst(5)
        } else if rest.contains("://") {
            return nil
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        path = slash == rest.endIndex ? "/" : String(rest[slash...])
        let authority = rest[..<slash]
        if let colon = authority.lastIndex(of: ":") {
            guard let port = Int(authority[authority.index(after: colon)...]), (1...65535).contains(port) else { return nil }
            host = String(authority[..<colon])
            self.port = port
        } else {
            host = String(authority)
            port = secure ? 443 : 9100
        }
        guard !host.isEmpty else { return nil }
    }
}

extension ClientSettings {
    /// Refuses a call of `service` when the configuration leaves it out of `serviceType`.
    func checkService(_ service: RtmServiceType, _ operation: String) throws(RtmErrorInfo) {
        guard services.contains(service) else {
            throw RtmErrorInfo(
                .serviceNotSupport, operation: operation,
                reason: "privateConfig.serviceType does not include the \(service == .stream ? "stream" : "message") service")
        }
    }
}
