import SwitchboardCore

/// Switchboard extension: which transport carries a client's connection
/// (`RtmPrivateConfig.transport`).
public enum RtmTransport: Int, Sendable {
    /// The platform's own: URLSession on Apple platforms, the epoll client on Linux.
    case automatic = 0
    /// Foundation's `URLSessionWebSocketTask`. On Linux it needs a libcurl built with WebSocket
    /// support, and takes neither `tlsCAFile` nor an `http` `proxyConfig`.
    case urlSession = 1
    /// The project's epoll WebSocket client with OpenSSL; Linux only.
    case epoll = 2
}

extension ClientSettings {
    /// The transport `choice` names on this platform; `invalidPrivateConfig` for one it lacks.
    static func transportChoice(_ choice: RtmTransport) throws(RtmErrorInfo) -> TransportChoice {
        switch choice {
        case .automatic:
            return .platformDefault
        case .urlSession:
            return .urlSession
        case .epoll:
            #if os(Linux)
            return .epoll
            #else
            throw RtmErrorInfo(
                .invalidPrivateConfig, operation: OperationName.Session.initialize, reason: "the epoll transport exists on Linux only")
            #endif
        }
    }

    /// The transport this client's connections go through.
    func makeTransport() throws(RtmErrorInfo) -> any ClientTransport {
        switch transport {
        case .urlSession:
            return try URLSessionTransport(self)
        case .epoll:
            #if os(Linux)
            return try EpollTransport(self)
            #else
            throw RtmErrorInfo(
                .invalidPrivateConfig, operation: OperationName.Session.initialize, reason: "the epoll transport exists on Linux only")
            #endif
        }
    }
}
