import Synchronization
import SwitchboardBench
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// One raw client connection of the load generator. Frames are handled on the connection's
/// loop thread: deliveries and publish answers are counted there, without a task per frame;
/// only set-up requests (login, subscribe, logout) resume a waiting task.
final class BenchClient: WebSocketHandler {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let userId: String
    let run: RunContext
    /// Publishes through this client, if it is a publisher.
    let publisher: Publisher?
    /// Takes the answers to the requests sent from the loop thread: the publisher's, or another
    /// driver's.
    let answers: (any AnswerSink)?
    /// Sees every push the client does not count itself (anything but stamped messages), on the
    /// loop thread that received it.
    let onPush: (@Sendable (_ bytes: [UInt8], _ loop: EventLoop) -> Void)?
    private let connection = Mutex<WebSocketConnection?>(nil)
    private let waiting = Mutex<[UInt32: CheckedContinuation<ServerFrame, any Error>]>([:])
    private let nextRequestId = Atomic<UInt32>(1)

    init(
        userId: String, run: RunContext, publisher: Publisher? = nil, answers: (any AnswerSink)? = nil,
        onPush: (@Sendable (_ bytes: [UInt8], _ loop: EventLoop) -> Void)? = nil
    ) {
        self.userId = userId
        self.run = run
        self.publisher = publisher
        self.answers = answers ?? publisher
        self.onPush = onPush
    }

    /// Opens the connection and logs in (heartbeat interval at its maximum, so a run needs no
    /// heartbeats).
    func connectAndLogIn(url: String) async throws {
        try await connect(url: url)
        try await logIn()
    }

    /// Opens the connection.
    func connect(url: String) async throws {
        let socket = try await WebSocketClient.connect(
            to: url, subprotocols: [Wire.subprotocol], timeout: .seconds(30),
            maxOutboundBytes: 64 * 1024 * 1024, sourceAddress: run.sourceAddress, group: run.group, handler: self)
        connection.withLock { $0 = socket }
        answers?.attach(socket)
    }

    /// Logs in.
    func logIn() async throws {
        try await expectOK(
            request(.session(.login(Login(appId: "bench", userId: userId, token: "", heartbeatInterval: 1800)))),
            "login")
    }

    /// Subscribes to message channel `channel` (messages only, no presence, unless `features` says).
    func subscribe(_ channel: String, features: RtmSubscribeChannelFeature = .message) async throws {
        try await expectOK(request(.channel(.subscribe(channel: channel, features: features))), "subscribe")
    }

    /// Joins stream channel `channel` with no features, and joins `topic` in it as a publisher.
    func joinStream(_ channel: String, publishingIn topic: String? = nil) async throws {
        try await expectOK(request(.stream(.join(channel: channel, token: "", features: []))), "join")
        guard let topic else { return }
        try await expectOK(request(.stream(.joinTopic(channel: channel, topic: topic, options: TopicJoinOptions()))), "joinTopic")
    }

    /// Subscribes to `users` publishing in `topic` of stream channel `channel`.
    func subscribeTopic(_ channel: String, topic: String, users: [String]) async throws {
        try await expectOK(request(.stream(.subscribeTopic(channel: channel, topic: topic, users: users))), "subscribeTopic")
    }

    /// Logs out; the server then closes the connection.
    func logOut() async throws {
        try await expectOK(request(.session(.logout)), "logout")
    }

    /// Closes the connection without logging out.
    func close() { connection.withLock { $0 }?.close() }

    /// Sends `operation` and fails unless it is answered `ok`.
    func expectOK(_ operation: ClientOperation) async throws {
        try await expectOK(request(operation), operation.name)
    }

    private func expectOK(_ answer: ServerFrame, _ operation: String) async throws {
        switch answer {
        case .answer: return
        case .error(_, let error): throw Failure(description: "\(operation): \(error)")
        default: throw Failure(description: "\(operation): unexpected \(answer.type)")
        }
    }

    /// Sends `operation` and returns its answer, decoded.
    func request(_ operation: ClientOperation) async throws -> ServerFrame {
        let id = nextRequestId.wrappingAdd(1, ordering: .relaxed).oldValue
        let bytes = ClientFrame(id: id, operation).encode()
        guard let socket = connection.withLock({ $0 }) else { throw Failure(description: "not connected") }
        return try await withCheckedThrowingContinuation { continuation in
            waiting.withLock { $0[id] = continuation }
            if !socket.sendBinary(bytes) {
                waiting.withLock { $0.removeValue(forKey: id) }?
                    .resume(throwing: Failure(description: "connection closed"))
            }
        }
    }

    // MARK: WebSocketHandler (on the loop thread)

    func webSocketOpened(_ connection: WebSocketConnection) {}

    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard case .binary(let bytes) = message else { return }
        bytes.withUnsafeBytes { webSocket(connection, receivedBinary: $0) }
    }

    /// Read where the transport received it: deliveries and the answers of a publisher's
    /// requests cost no copy.
    func webSocket(_ connection: WebSocketConnection, receivedBinary bytes: UnsafeRawBufferPointer) {
        switch ServerFrameScan(bytes) {
        case .message(let timestamp):
            run.recorder(for: connection.eventLoop).delivered(
                sentAt: timestamp, now: MonotonicClock.now(), measuring: run.measuring)
        case .ok(let id) where id >= Publisher.firstId:
            answers?.answered(id, accepted: true, bytes: bytes, measuring: run.measuring)
        case .error(let id) where id >= Publisher.firstId:
            answers?.answered(id, accepted: false, bytes: bytes, measuring: run.measuring)
        case .ok(let id), .error(let id):
            let bytes = Array(bytes)
            let waiter = waiting.withLock { $0.removeValue(forKey: id) }
            guard let waiter else { return }
            do {
                waiter.resume(returning: try ServerFrame.decode(bytes))
            } catch {
                waiter.resume(throwing: error)
            }
        case .other:
            onPush?(Array(bytes), connection.eventLoop)
        }
    }

    func webSocketClosed(_ connection: WebSocketConnection, code: WebSocketCloseCode?, reason: String) {
        let waiters = waiting.withLock { waiting in
            defer { waiting.removeAll() }
            return Array(waiting.values)
        }
        for waiter in waiters { waiter.resume(throwing: Failure(description: "closed: \(reason)")) }
    }
}

/// Takes the answers to the requests a client sends from its loop thread (ids from
/// `Publisher.firstId` up), on that thread.
protocol AnswerSink: AnyObject, Sendable {
    /// The client's connection is open.
    func attach(_ socket: WebSocketConnection)
    /// The answer to request `id` arrived: `ok` (`accepted`) or an error, as `bytes` (valid
    /// during the call only).
    func answered(_ id: UInt32, accepted: Bool, bytes: UnsafeRawBufferPointer, measuring: Bool)
}
