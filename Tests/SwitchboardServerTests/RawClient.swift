import Foundation
import Synchronization
import SwitchboardTestKit
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// Collects what a raw client's socket delivers. Frames are decoded when a test first reads
/// them, not as they arrive: a client that only fills a channel receives thousands of events
/// nobody reads, and decoding them all would tie up a core the in-process server needs.
final class RawInbox: WebSocketHandler {
    private struct Received {
        var bytes: [[UInt8]] = []
        var decoded: [ServerFrame] = []
        /// How many of `bytes` are decoded (or skipped, when they do not decode) into `decoded`.
        var decodedCount = 0
    }
    private let received = Mutex(Received())
    let closedWith = Mutex<WebSocketCloseCode??>(nil)

    /// Every frame that decoded, in the order received.
    var frames: [ServerFrame] {
        received.withLock { state in
            while state.decodedCount < state.bytes.count {
                if let frame = try? ServerFrame.decode(state.bytes[state.decodedCount]) { state.decoded.append(frame) }
                state.decodedCount += 1
            }
            return state.decoded
        }
    }

    /// The size of every binary frame received, in bytes.
    var frameSizes: [Int] { received.withLock { $0.bytes.map(\.count) } }

    func webSocketOpened(_ connection: WebSocketConnection) {}

    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard case .binary(let bytes) = message else { return }
        received.withLock { $0.bytes.append(bytes) }
    }

    func webSocketClosed(_ connection: WebSocketConnection, code: WebSocketCloseCode?, reason: String) {
        closedWith.withLock { $0 = .some(code) }
    }
}

/// A protocol-level client for server tests: sends `ClientFrame`s, collects `ServerFrame`s.
final class RawClient: Sendable {
    let connection: WebSocketConnection
    private let inbox: RawInbox

    private init(connection: WebSocketConnection, inbox: RawInbox) {
        self.connection = connection
        self.inbox = inbox
    }

    /// Connects; `maxMessageBytes` above the wire's limit lets a test measure frames the SDK would refuse.
    static func connect(
        to url: String, group: EventLoopGroup, subprotocols: [String] = [Wire.subprotocol],
        maxMessageBytes: Int = Wire.maxFrameSize
    ) async throws -> RawClient {
        let inbox = RawInbox()
        let connection = try await WebSocketClient.connect(
            to: url, subprotocols: subprotocols, timeout: .seconds(5), maxMessageBytes: maxMessageBytes, group: group,
            handler: inbox)
        return RawClient(connection: connection, inbox: inbox)
    }

    func send(_ frame: ClientFrame) { connection.send(OutboundFrame.binary(frame.encode())) }

    var received: [ServerFrame] { inbox.frames }

    /// The size of every binary frame received so far, in bytes.
    var receivedSizes: [Int] { inbox.frameSizes }

    /// The close code once closed (`.some(nil)` when closed without one); nil while open.
    var closeCode: WebSocketCloseCode?? { inbox.closedWith.withLock { $0 } }

    /// Waits (bounded, real time) for the answer to request `id`.
    func answer(to id: UInt32, timeout: Duration = RawClient.patience) async -> ServerFrame? {
        await waitFor(timeout: timeout) { $0.received.first { $0.requestId == id } }
    }

    /// How long a wait lasts by default: a wait that succeeds returns as soon as it does, and a
    /// test machine under load can hold the in-process server back for several seconds (the
    /// whole suite on two cores busy with other work has taken an answer past 5 s).
    static let patience = Patience.standard

    /// Waits (bounded, real time) until `pick` returns a value.
    func waitFor<T>(timeout: Duration = RawClient.patience, _ pick: (RawClient) -> T?) async -> T? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let value = pick(self) { return value }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return pick(self)
    }

    /// Logs in and returns the answer.
    /// Logs in as `userId`; `heartbeatInterval` is how long (seconds) the server waits between
    /// signs of life before counting the client lost, plus its grace: a raw client sends none by
    /// itself, so a test that keeps one silent for long gives it a long interval.
    func login(
        _ userId: String, id: UInt32 = 1, token: String = "", appId: String = "test-app", heartbeatInterval: Int = 5
    ) async -> ServerFrame? {
        send(
            ClientFrame(
                id: id,
                .session(
                    .login(
                        Login(
                            appId: appId, userId: userId, token: token, heartbeatInterval: heartbeatInterval,
                            presenceTimeout: 30)))))
        return await answer(to: id)
    }
}

extension ServerFrame {
    /// The error code of an `error` frame.
    var errorCode: RtmErrorCode? {
        if case .error(_, let error) = self { error.code } else { nil }
    }
}

extension Optional<ServerFrame> {
    /// Whether an answer came and is not an error (no answer at all is no success).
    var isSuccess: Bool { self.map { $0.errorCode == nil } ?? false }
}
