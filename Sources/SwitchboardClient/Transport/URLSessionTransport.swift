import Foundation
import SwitchboardCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The Apple-platform transport: Foundation's `URLSessionWebSocketTask`, one ephemeral session
/// per connection. TLS is the system's, with `tlsCAFile`'s certificates added as anchors in the
/// session delegate's server-trust challenge; the proxy is the system's unless an `http`
/// `RtmProxyConfig` names one (then `connectionProxyDictionary`, with its credentials answered in
/// the proxy challenge).
///
/// It builds on Linux too, over FoundationNetworking, which needs a libcurl built with WebSocket
/// support. There FoundationNetworking asks no trust challenge and ignores
/// `connectionProxyDictionary`, so a client that names a CA file or a proxy is refused at
/// `initialize` instead of silently connecting without them.
final class URLSessionTransport: ClientTransport {
    /// What every connection's delegate needs.
    struct Options: Sendable {
        /// DER certificates trusted besides the system's roots (from `tlsCAFile`).
        var anchors: [Data]
        /// The proxy from `RtmProxyConfig`; nil for the system's settings.
        var proxy: ProxySettings?
    }

    /// Bytes a connection may have queued for sending before `send` refuses more.
    static let maxQueuedBytes = 4 * 1024 * 1024

    private let options: Options
    private let open = Locked<[ObjectIdentifier: URLSessionSocket]>([:])

    /// Reads `settings`' CA file and proxy; throws `invalidPrivateConfig` for an unusable CA file
    /// and, on Linux, for settings FoundationNetworking cannot apply.
    init(_ settings: ClientSettings) throws(RtmErrorInfo) {
        #if canImport(FoundationNetworking)
        if settings.caFile != nil {
            throw RtmErrorInfo(
                .invalidPrivateConfig, operation: OperationName.Session.initialize,
                reason: "tlsCAFile needs the epoll transport on Linux: FoundationNetworking has no trust challenge")
        }
        if settings.proxy != nil {
            throw RtmErrorInfo(
                .invalidPrivateConfig, operation: OperationName.Session.initialize,
                reason: "an http proxyConfig needs the epoll transport on Linux: FoundationNetworking ignores it")
        }
        #endif
        var anchors: [Data] = []
        if let caFile = settings.caFile {
            guard let pem = FileManager.default.contents(atPath: caFile) else {
                throw RtmErrorInfo(.invalidPrivateConfig, operation: OperationName.Session.initialize, reason: "cannot read tlsCAFile \(caFile)")
            }
            anchors = PEMCertificates.der(from: pem)
            guard !anchors.isEmpty else {
                throw RtmErrorInfo(
                    .invalidPrivateConfig, operation: OperationName.Session.initialize, reason: "tlsCAFile \(caFile) holds no PEM certificate")
            }
        }
        options = Options(anchors: anchors, proxy: settings.proxy)
    }

    func connect(
        to server: ServerAddress, subprotocol: String, timeout: PortableDuration, inbox: SocketInbox
    ) async throws(TransportFailure) -> any ClientSocket {
        guard let url = URL(string: server.url) else {
            throw TransportFailure(kind: .failed, reason: "\(server.url) is not a URL")
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = TimeInterval(timeout.components.seconds) + 1
        if let proxy = options.proxy { configuration.connectionProxyDictionary = Self.proxyDictionary(proxy) }
        let socket = URLSessionSocket(inbox: inbox, subprotocol: subprotocol, options: options) { [open] socket in
            _ = open.withLock { $0.removeValue(forKey: ObjectIdentifier(socket)) }
        }
        open.withLock { $0[ObjectIdentifier(socket)] = socket }
        let session = URLSession(configuration: configuration, delegate: socket, delegateQueue: nil)
        let task = session.webSocketTask(with: url, protocols: [subprotocol])
        task.maximumMessageSize = 1024 * 1024
        try await socket.open(session: session, task: task, timeout: timeout)
        return socket
    }

    func shutdown() {
        let sockets = open.withLock { open in
            defer { open.removeAll() }
            return Array(open.values)
        }
        for socket in sockets { socket.close() }
    }

    /// `connectionProxyDictionary` for `proxy`, for `ws://` (HTTP) and `wss://` (HTTPS) alike. The
    /// keys are the values of CFNetwork's `kCFNetworkProxiesHTTP…` constants, spelled out because
    /// iOS lacks the `HTTPS` ones' names.
    static func proxyDictionary(_ proxy: ProxySettings) -> [AnyHashable: Any] {
        [
            "HTTPEnable": 1, "HTTPProxy": proxy.host, "HTTPPort": proxy.port,
            "HTTPSEnable": 1, "HTTPSProxy": proxy.host, "HTTPSPort": proxy.port,
        ]
    }
}
