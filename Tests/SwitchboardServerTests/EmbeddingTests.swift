import Foundation
import Synchronization
import Testing
import SwitchboardClient
import SwitchboardCore
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit

/// The three ways a team builds on the server core: embed it, swap a module, extend it.
@Suite(.timeLimit(.minutes(5))) struct EmbeddingTests {
    func client(_ userId: String, _ server: SwitchboardServer) throws -> RtmClientKit {
        let config = RtmClientConfig(appId: "test-app", userId: userId)
        config.privateConfig = RtmPrivateConfig()
        config.privateConfig?.accessPointHosts = [server.url]
        return try RtmClientKit(config, delegate: nil)
    }

    func firstMessage(of client: RtmClientKit) -> Task<RtmMessageEvent?, Never> {
        let events = client.events
        return Task {
            for await event in events { if case .message(let message) = event { return message } }
            return nil
        }
    }

    @Test func embedding_aServerStartedFromTheLibraryServesTheSDK() async throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.log = ServerLog(level: .none)
        let server = SwitchboardServer(configuration: configuration)
        let port = try await server.start()
        #expect(port > 0)
        #expect(server.url == "ws://127.0.0.1:\(port)")
        let alice = try client("alice", server)
        let received = firstMessage(of: alice)
        #expect(await alice.login("").1 == nil)
        #expect(await alice.subscribe(channelName: "embedded", option: nil).1 == nil)
        #expect(server.connectionCount == 1)
        #expect(await alice.publish(channelName: "embedded", message: "inside", option: nil).1 == nil)
        #expect(await received.value?.message.stringData == "inside")
        alice.destroy()
        await server.shutdown()
    }

    /// A message router of the test's own: it delivers every message to its publisher only,
    /// shouted, and answers every subscription — through the same bus requests as the built-in one.
    actor ShoutingRouter: Module {
        nonisolated let name = "shouting-router"
        private var seen = 0

        func start(_ context: ModuleContext) async {
            context.bus.handle(Subscribe.self) { _ in Done() }
            context.bus.handle(Unsubscribe.self) { _ in Done() }
            context.bus.handle(Publish.self) { [self] request in
                await self.count()
                guard case .string(let text) = request.payload else { return Done() }
                let shout = MessageDelivery(
                    channelType: request.channelType, channelName: request.channelName,
                    payload: .string(text.uppercased()), publisher: "router", customType: "swapped",
                    timestamp: context.clock.wallMilliseconds)
                context.outbox.deliver(.message(shout), to: [request.caller.session])
                return Done()
            }
        }

        private func count() { seen += 1 }
        var published: Int { seen }
    }

    @Test func swapping_aReplacedMessageRouterIsTheOneTheServerUses() async throws {
        let router = ShoutingRouter()
        let server = try await TestServer.start(modules: { $0.messageRouter = router })
        let alice = try client("alice", server)
        let received = firstMessage(of: alice)
        #expect(await alice.login("").1 == nil)
        #expect(await alice.publish(channelName: "anything", message: "quiet please", option: nil).1 == nil)
        let message = await received.value
        #expect(message?.message.stringData == "QUIET PLEASE")
        #expect(message?.publisher == "router")
        #expect(message?.customType == "swapped")
        #expect(await router.published == 1)
        alice.destroy()
        await server.shutdown()
    }

    @Test func extending_anAuditLogLearnsEverythingFromTheBus() async throws {
        let audit = AuditLog()
        let server = try await TestServer.start(modules: { $0.extensions.append(audit) })
        let alice = try client("alice", server)
        let bob = try client("bob", server)
        let bobGot = firstMessage(of: bob)
        #expect(await alice.login("").1 == nil)
        #expect(await bob.login("").1 == nil)
        #expect(await bob.subscribe(channelName: "room", option: nil).1 == nil)
        #expect(await alice.publish(channelName: "room", message: "12345", option: nil).1 == nil)
        _ = await bobGot.value
        #expect(await alice.logout().1 == nil)
        var lines: [String] = []
        for _ in 0..<200 {
            lines = await audit.lines
            if lines.count >= 4 { break }
            try? await Task.sleep(for: .milliseconds(5))
        }
        #expect(
            lines == [
                "login alice@test-app", "login bob@test-app", "publish alice@test-app -> message:room@test-app 5B to 1",
                "end alice@test-app logout",
            ])
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }
}
