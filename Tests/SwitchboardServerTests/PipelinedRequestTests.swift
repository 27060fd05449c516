import Synchronization
import Testing
import SwitchboardCore
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardWire

/// Requests a client sends without waiting for answers are carried out in the order sent, also
/// when the connection's request loop stops between bursts and starts again.
@Suite(.timeLimit(.minutes(5))) struct PipelinedRequestTests {
    @Test func pipelinedPublishesAreAnsweredAndDeliveredInOrder() async throws {
        // 301 frames in one burst: lift the call limits and the frame-rate cap.
        let server = try await TestServer.start(limits: .withoutRateLimits, configure: { $0.maxFramesPerSecond = nil })
        let group = try EventLoopGroup(threads: 1)
        let subscriberLog = FrameLog()
        let publisherLog = FrameLog()
        let subscriber = try await WebSocketClient.connect(
            to: server.url, subprotocols: [Wire.subprotocol], group: group, handler: subscriberLog)
        let publisher = try await WebSocketClient.connect(
            to: server.url, subprotocols: [Wire.subprotocol], group: group, handler: publisherLog)

        subscriber.sendBinary(Self.login(id: 1, userId: "reader").encode())
        subscriber.sendBinary(ClientFrame(id: 2, .channel(.subscribe(channel: "ordered", features: .message))).encode())
        let subscribed = try await subscriberLog.wait { $0.count >= 2 }
        #expect(subscribed.map(\.requestId) == [1, 2])

        // Login and 300 publishes in one burst: nothing waits for an answer.
        let count = 300
        publisher.sendBinary(Self.login(id: 1, userId: "writer").encode())
        for index in 0..<count {
            let publish = ClientFrame(
                id: UInt32(10 + index),
                .channel(.publish(channelType: .message, channel: "ordered", message: .string("m\(index)"), customType: "")))
            publisher.sendBinary(publish.encode())
        }
        let answers = try await publisherLog.wait { $0.count >= count + 1 }
        #expect(answers.first?.type == "loginOk")
        let okIds = answers.dropFirst().compactMap { frame -> UInt32? in
            if case .answer(let id, .done) = frame { id } else { nil }
        }
        #expect(okIds == (0..<count).map { UInt32(10 + $0) })

        let received = try await subscriberLog.wait { $0.count >= count + 2 }
        let bodies = received.dropFirst(2).compactMap { frame -> String? in
            if case .push(.message(let delivery)) = frame, case .string(let text) = delivery.payload { text } else { nil }
        }
        #expect(bodies == (0..<count).map { "m\($0)" })

        subscriber.close()
        publisher.close()
        await server.shutdown()
        group.shutdown()
    }

    @Test func aPublishAnsweredAtOnceNeverOvertakesTheRequestBeforeIt() async throws {
        let server = try await TestServer.start(limits: .withoutRateLimits, configure: { $0.maxFramesPerSecond = nil })
        let group = try EventLoopGroup(threads: 1)
        let log = FrameLog()
        let client = try await WebSocketClient.connect(to: server.url, subprotocols: [Wire.subprotocol], group: group, handler: log)
        client.sendBinary(Self.login(id: 1, userId: "echo").encode())
        _ = try await log.wait { $0.count >= 1 }
        // The subscribe goes to the router's actor; the publish behind it is one the server could
        // answer on the spot, but it waits its turn, so the client hears its own message.
        for round in 0..<20 {
            let base = UInt32(10 + 2 * round)
            client.sendBinary(ClientFrame(id: base, .channel(.subscribe(channel: "own\(round)", features: .message))).encode())
            client.sendBinary(
                ClientFrame(id: base + 1, .channel(.publish(channelType: .message, channel: "own\(round)", message: .string("r\(round)"), customType: "")))
                    .encode())
        }
        let frames = try await log.wait { $0.count >= 1 + 20 * 3 }
        let answered = frames.compactMap { frame -> UInt32? in
            if case .answer(let id, _) = frame { id } else { nil }
        }
        #expect(answered == [1] + (0..<40).map { UInt32(10 + $0) })
        let heard = frames.compactMap { frame -> String? in
            if case .push(.message(let delivery)) = frame, case .string(let text) = delivery.payload { text } else { nil }
        }
        #expect(heard == (0..<20).map { "r\($0)" })
        client.close()
        await server.shutdown()
        group.shutdown()
    }

    private static func login(id: UInt32, userId: String) -> ClientFrame {
        ClientFrame(id: id, .session(.login(Login(appId: "app", userId: userId, token: ""))))
    }
}

/// The frames one raw client received, decoded, in arrival order.
private final class FrameLog: WebSocketHandler {
    private let frames = Mutex<[ServerFrame]>([])

    func webSocketOpened(_ connection: WebSocketConnection) {}

    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        guard case .binary(let bytes) = message, let frame = try? ServerFrame.decode(bytes) else { return }
        frames.withLock { $0.append(frame) }
    }

    func webSocketClosed(_ connection: WebSocketConnection, code: WebSocketCloseCode?, reason: String) {}

    /// The frames so far, once `done` holds for them; fails after ten seconds.
    func wait(until done: ([ServerFrame]) -> Bool) async throws -> [ServerFrame] {
        for _ in 0..<1_000 {
            let current = frames.withLock { $0 }
            if done(current) { return current }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("timed out with \(frames.withLock { $0.count }) frames")
        return frames.withLock { $0 }
    }
}
