import SwitchboardWire
import SwitchboardCore

/// Turns one socket's messages into an ordered stream for the client engine; a transport feeds it.
final class SocketInbox: Sendable {
    /// What the socket delivered.
    enum Item: Sendable {
        case frame(ServerFrame)
        case undecodable(WireError)
        case closed(reason: String)
    }

    let stream: AsyncStream<Item>
    private let continuation: AsyncStream<Item>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// One binary message from the server.
    func received(_ bytes: [UInt8]) {
        do {
            continuation.yield(.frame(try ServerFrame.decode(bytes)))
        } catch {
            continuation.yield(.undecodable(error))
        }
    }

    /// The connection closed; nothing more comes (a second call changes nothing).
    func closed(reason: String) {
        continuation.yield(.closed(reason: reason))
        continuation.finish()
    }
}
