import Synchronization
import Testing
import SwitchboardCore
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardWire

/// A connection whose requests pile up behind a slow one is closed, not queued for without bound.
@Suite(.timeLimit(.minutes(5))) struct WaitingRequestsTests {
    /// An extension whose one operation waits until the test lets it go.
    final class Gate: Module {
        let name = "gate"
        private let waiting = Mutex<[CheckedContinuation<Void, Never>]>([])
        private let open = Mutex(false)

        func start(_ context: ModuleContext) async {
            context.bus.handleExtension("stall") { [self] _ in
                await withCheckedContinuation { continuation in
                    let go = open.withLock { $0 }
                    if go { continuation.resume() } else { waiting.withLock { $0.append(continuation) } }
                }
                return nil
            }
        }

        func release() {
            open.withLock { $0 = true }
            for continuation in waiting.withLock({ state in defer { state.removeAll() }; return state }) { continuation.resume() }
        }
    }

    @Test func past16MiBOfWaitingRequestsTheConnectionIsClosedWith1008() async throws {
        let gate = Gate()
        let server = try await TestServer.start(
            limits: .withoutRateLimits, configure: { $0.maxFramesPerSecond = nil }, modules: { $0.extensions.append(gate) })
        let group = try EventLoopGroup(threads: 1)
        let client = try await RawClient.connect(to: server.url, group: group)
        _ = await client.login("alice")
        client.send(ClientFrame(id: 2, .extension(ExtensionOperation("stall"))))
        // 300 publishes of 60 KB wait behind the stalled call: 18 MB.
        let body = MessagePayload.binary(Array(repeating: 7, count: 60_000))
        for index in 0..<300 {
            client.send(.publish(id: UInt32(10 + index), channelType: .message, channel: "room", message: body))
        }
        // 18 MB through loopback: on a machine busy with the other tests this takes seconds.
        #expect(await client.waitFor(timeout: .seconds(30)) { $0.closeCode } == .some(.policyViolation))
        gate.release()
        // Another client is served as usual.
        let other = try await RawClient.connect(to: server.url, group: group)
        #expect(await other.login("bob")?.loginAccepted != nil)
        other.connection.close()
        await server.shutdown()
        group.shutdown()
    }
}
