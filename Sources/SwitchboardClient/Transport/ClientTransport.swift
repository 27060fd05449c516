import SwitchboardCore

/// How the SDK reaches its server: opens WebSocket connections offering one subprotocol. One
/// implementation per platform family (`EpollTransport` on Linux, `URLSessionTransport` on Apple
/// platforms and, selected, on Linux); `TransportChoice` says which a client uses.
protocol ClientTransport: Sendable {
    /// Opens a connection to `server` offering `subprotocol`, within `timeout`; what arrives on it
    /// goes to `inbox`, in order, ending with one `.closed`. Throws a `TransportFailure`.
    func connect(
        to server: ServerAddress, subprotocol: String, timeout: PortableDuration, inbox: SocketInbox
    ) async throws(TransportFailure) -> any ClientSocket

    /// Stops what the transport runs (its threads, its sessions); called once, when the client
    /// is destroyed. Open sockets are closed before.
    func shutdown()
}

/// One open connection of a `ClientTransport`.
protocol ClientSocket: AnyObject, Sendable {
    /// Queues one binary message; false when the connection is closed or cannot take more.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool

    /// Closes the connection normally. Its inbox still gets its `.closed`.
    func close()
}

/// Why a connection attempt failed.
struct TransportFailure: Error, Sendable, CustomStringConvertible {
    /// What kind of failure it was.
    enum Kind: Sendable, Equatable {
        /// The server's TLS certificate was refused (untrusted, expired, for another host): another
        /// attempt would meet the same certificate.
        case certificateRefused
        /// Anything else (refused, unreachable, timed out, handshake rejected): worth retrying.
        case failed
    }

    var kind: Kind
    /// What happened, for the error's reason.
    var reason: String

    var description: String { reason }
}

/// Which transport a client uses, read from `RtmPrivateConfig.transport`.
enum TransportChoice: Sendable, Equatable {
    /// The project's epoll WebSocket client with OpenSSL (Linux only).
    case epoll
    /// Foundation's `URLSessionWebSocketTask`.
    case urlSession

    /// The platform's default: epoll on Linux, URLSession elsewhere.
    static var platformDefault: TransportChoice {
        #if os(Linux)
        .epoll
        #else
        .urlSession
        #endif
    }
}
