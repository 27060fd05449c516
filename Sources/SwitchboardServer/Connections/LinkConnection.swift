import SwitchboardTransport

/// What the server's side of a client connection needs from the connection under it: sending
/// frames, closing, and how much waits unsent. `WebSocketConnection` is the one the server runs;
/// a test gives a link an in-memory one that records what it is sent.
///
/// The seam costs nothing at run time. `ClientLink`, `SessionRegistry`, `RequestDispatcher`,
/// `ConnectionHub` and `LoginDeadline` take the connection as a generic parameter, never as an
/// existential, and the server instantiates them only with `WebSocketConnection`, inside this
/// module: a release build (whole-module optimisation) specialises every call on a received
/// frame, an answer and a push to the concrete connection, so they compile as they did before
/// there was a seam. The two ways in from outside the module are conformances constrained to that
/// type (`SessionRegistry: Outbox` and `ConnectionHub: WebSocketHandler`, both `where Connection
/// == WebSocketConnection`), so even their witnesses call the specialised code: no witness table
/// of this protocol is consulted, and nothing is boxed or allocated per message.
protocol LinkConnection: AnyObject, Sendable {
    /// The largest payload a frame sent alone is copied into the connection's batch with.
    static var batchedBinaryLimit: Int { get }
    /// The connection's number, unique for the life of the server.
    var id: UInt64 { get }
    /// The peer's address, for logs and refusals.
    var remoteAddress: String { get }
    /// Whether frames can still be sent.
    var isOpen: Bool { get }
    /// Bytes queued and not yet handed to the kernel.
    var bufferedBytes: Int { get }
    /// Unsent bytes past which the connection closes its peer as a slow consumer.
    var maxOutboundBytes: Int { get }
    /// Queues a frame shared with other connections; false when it was not queued.
    @discardableResult func send(_ frame: OutboundFrame) -> Bool
    /// Queues a frame this connection alone sends, copied when small; false when not queued.
    @discardableResult func sendCopy(of frame: OutboundFrame) -> Bool
    /// Sends `bytes` as one binary message; false when not queued.
    @discardableResult func sendBinary(_ bytes: [UInt8]) -> Bool
    /// Sends `bytes` (copied before this returns) as one binary message; false when not queued.
    @discardableResult func sendBinary(_ bytes: UnsafeRawBufferPointer) -> Bool
    /// Sends one binary message of `payloadCount` bytes that `write` fills in place, calling
    /// `write` once whether or not it is queued (it must not reach this connection); false when
    /// not queued.
    @discardableResult func sendBinary(payloadCount: Int, write: (UnsafeMutableRawBufferPointer) -> Void) -> Bool
    /// Closes after the frames already queued; later sends fail.
    func close(code: WebSocketCloseCode, reason: String)
}

extension WebSocketConnection: LinkConnection {}

/// The link of a real client connection.
typealias SocketLink = ClientLink<WebSocketConnection>
