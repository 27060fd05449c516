import Testing
import SwitchboardClient
import SwitchboardCore
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit

/// An extension module with a client operation and a push of its own: the Announcements example.
@Suite(.timeLimit(.minutes(5))) struct ExtensionModuleTests {
    @Test func theModuleAloneReachesEverySessionOfTheCallersAppOnly() async throws {
        let harness = await ModuleHarness(modules: [Announcements()])
        let alice = Caller(app: "a", userId: "alice", session: SessionID(1))
        let bob = Caller(app: "a", userId: "bob", session: SessionID(2))
        let carol = Caller(app: "b", userId: "carol", session: SessionID(3))
        for caller in [alice, bob, carol] { await harness.bus.publishAndWait(SessionOpened(caller: caller)) }
        let answer = try await harness.bus.callExtension(ExtensionCall(caller: alice, name: "announce", body: .string("drill")))
        #expect(answer == .string("2"))
        let push = Push.extension(ExtensionPush(name: "announcement", body: .string("drill")))
        #expect(harness.outbox.pushes(to: alice.session) == [push])
        #expect(harness.outbox.pushes(to: bob.session) == [push])
        #expect(harness.outbox.pushes(to: carol.session).isEmpty)
        await harness.bus.publishAndWait(SessionClosed(caller: bob, reason: .logout))
        #expect(try await harness.bus.callExtension(ExtensionCall(caller: alice, name: "announce", body: .string("2nd"))) == .string("1"))
        await #expect(throws: RtmError.self) {
            _ = try await harness.bus.callExtension(
                ExtensionCall(caller: alice, name: "announce", body: .binary(Array(repeating: 0, count: 1025))))
        }
        await harness.stop()
    }

    @Test func clientsCallTheOperationAndReceiveThePush() async throws {
        let server = try await TestServer.start(modules: { $0.extensions.append(Announcements()) })
        func client(_ user: String, _ app: String) async throws -> (RtmClientKit, AsyncStream<RtmEvent>) {
            let config = RtmClientConfig(appId: app, userId: user)
            config.privateConfig = RtmPrivateConfig()
            config.privateConfig?.accessPointHosts = [server.url]
            let kit = try RtmClientKit(config, delegate: nil)
            let events = kit.events
            #expect(await kit.login("").1 == nil)
            return (kit, events)
        }
        let (alice, _) = try await client("alice", "a")
        let (bob, bobEvents) = try await client("bob", "a")
        let (carol, carolEvents) = try await client("carol", "b")
        let heard = Task { () -> String? in
            for await event in bobEvents {
                if case .extension(let push) = event { return "\(push.name): \(push.body?.stringData ?? "")" }
            }
            return nil
        }
        let answer = await alice.callExtension("announce", body: "fire drill at noon")
        #expect(answer.1 == nil)
        #expect(answer.0?.name == "announce")
        #expect(answer.0?.body?.stringData == "2")
        #expect(await heard.value == "announcement: fire drill at noon")
        let unknown = await alice.callExtension("nobody-home")
        #expect(unknown.1?.errorCode == .serviceNotSupport)
        let carolHeard = Task { () -> Bool in
            for await event in carolEvents { if case .extension = event { return true } }
            return false
        }
        for kit in [alice, bob, carol] { kit.destroy() }
        #expect(await carolHeard.value == false, "app b must not hear app a's announcement")
        await server.shutdown()
    }
}
