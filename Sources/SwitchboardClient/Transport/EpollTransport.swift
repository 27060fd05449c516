#if os(Linux)
import Foundation
import SwitchboardCore
import SwitchboardCryptography
import SwitchboardTransport

/// The Linux transport: the project's epoll WebSocket client on one event-loop thread of its
/// own, TLS through OpenSSL (the system's roots plus `tlsCAFile`), an HTTP proxy through
/// `CONNECT`.
final class EpollTransport: ClientTransport {
    private let group: EventLoopGroup
    /// The client context for `wss://` servers; nil when every server is `ws://`.
    private let tls: TLSContext?
    private let proxy: HTTPProxy?

    /// Reads the TLS and proxy settings; throws `invalidPrivateConfig` when `tlsCAFile` is unusable.
    init(_ settings: ClientSettings) throws(RtmErrorInfo) {
        if settings.servers.contains(where: \.secure) {
            do {
                tls = try TLSContext.client(caFile: settings.caFile)
            } catch {
                throw RtmErrorInfo(.invalidPrivateConfig, operation: OperationName.Session.initialize, reason: "\(error)")
            }
        } else {
            tls = nil
        }
        proxy = settings.proxy.map {
            HTTPProxy(host: $0.host, port: $0.port, username: $0.username, password: $0.password)
        }
        do {
            group = try EventLoopGroup(threads: 1)
        } catch {
            throw RtmErrorInfo(.notInitialized, operation: OperationName.Session.initialize, reason: "cannot start the event loop: \(error)")
        }
    }

    /// `span` as the transport counts time (Swift's `Duration`; the same type unless the SDK is
    /// built with its Apple time type, `-DSWITCHBOARD_PORTABLE_TIME`).
    private static func transportTime(_ span: PortableDuration) -> Duration {
        let (seconds, attoseconds) = span.components
        return Duration(secondsComponent: seconds, attosecondsComponent: attoseconds)
    }

    func connect(
        to server: ServerAddress, subprotocol: String, timeout: PortableDuration, inbox: SocketInbox
    ) async throws(TransportFailure) -> any ClientSocket {
        do {
            let connection = try await WebSocketClient.connect(
                to: server.url, subprotocols: [subprotocol], timeout: Self.transportTime(timeout), tls: tls, proxy: proxy,
                group: group, handler: EpollInbox(inbox: inbox))
            return EpollSocket(connection: connection)
        } catch {
            throw Self.failure(error)
        }
    }

    func shutdown() {
        // Joining the loop thread blocks: do it off Swift's cooperative pool.
        let group = group
        Thread.detachNewThread { group.shutdown() }
    }

    /// A refused certificate ends the login; anything else is worth another attempt.
    static func failure(_ error: any Error) -> TransportFailure {
        if case WebSocketClientError.tlsFailed(let failure) = error, failure.kind == .certificate {
            return TransportFailure(kind: .certificateRefused, reason: failure.reason)
        }
        return TransportFailure(kind: .failed, reason: "\(error)")
    }
}

/// An open epoll WebSocket connection.
private final class EpollSocket: ClientSocket {
    let connection: WebSocketConnection

    init(connection: WebSocketConnection) { self.connection = connection }

    func send(_ bytes: [UInt8]) -> Bool { connection.send(OutboundFrame.binary(bytes)) }

    func close() { connection.close(code: .normalClosure, reason: "") }
}

/// Hands the loop's callbacks for one connection to its inbox.
private struct EpollInbox: WebSocketHandler {
    let inbox: SocketInbox

    func webSocketOpened(_ connection: WebSocketConnection) {}

    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard case .binary(let bytes) = message else { return }
        inbox.received(bytes)
    }

    func webSocketClosed(_ connection: WebSocketConnection, code: WebSocketCloseCode?, reason: String) {
        inbox.closed(reason: code.map { "\($0) \(reason)" } ?? "dropped")
    }
}
#endif
