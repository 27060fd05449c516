import Synchronization
import Testing
import SwitchboardCluster
import SwitchboardCore
import SwitchboardRedis
import SwitchboardTestKit
import SwitchboardTransport

/// Two nodes in one process, each its own bus with the real session module, message router and
/// cluster link, sharing a real redis-server: what one node accepts reaches the other's sessions.
@Suite(.timeLimit(.minutes(3))) struct ClusterLinkTests {
    func node(_ name: String, on redis: RedisServer) async throws -> ClusterNode {
        try await ClusterNode.start(name, on: redis)
    }

    func stop(_ nodes: ClusterNode...) async {
        for node in nodes { await node.stop() }
    }

    @Test func channelMessagesReachEverySubscriberOnTheOtherNodeOnceInOrder() async throws {
        try await RedisServer.with { redis in
            let a = try await node("a", on: redis)
            let b = try await node("b", on: redis)
            let alice = try await a.logIn("alice")
            let carol = try await a.logIn("carol")
            let bob = try await b.logIn("bob")
            for caller in [alice, carol] { _ = try await a.harness.bus.request(Subscribe(caller: caller, channelName: "room")) }
            _ = try await b.harness.bus.request(Subscribe(caller: bob, channelName: "room"))
            for number in 0..<50 { try await b.publish(bob, .message, to: "room", "b\(number)") }
            try await a.publish(alice, .message, to: "room", "a0")
            let fromB = (0..<50).map { "b\($0)" }
            #expect(await eventually { a.messages(to: alice).count == 51 && a.messages(to: carol).count == 51 })
            #expect(await eventually { b.messages(to: bob).count == 51 })
            for (node, caller) in [(a, alice), (a, carol), (b, bob)] {
                let got = node.messages(to: caller)
                #expect(got.filter { $0.hasPrefix("b") } == fromB, "\(caller)")
                #expect(got.filter { $0 == "a0" }.count == 1, "\(caller)")
            }
            #expect(a.link.received.received == 50)
            #expect(b.link.received.received == 1)
            await stop(a, b)
        }
    }

    @Test func userMessagesReachTheOtherNodeAndOfflineMeansOnNoNode() async throws {
        try await RedisServer.with { redis in
            let a = try await node("a", on: redis)
            let b = try await node("b", on: redis)
            let alice = try await a.logIn("alice")
            let bob = try await b.logIn("bob")
            for number in 0..<20 { try await b.publish(bob, .user, to: "alice", "d\(number)") }
            #expect(await eventually { a.messages(to: alice).count == 20 })
            #expect(a.messages(to: alice) == (0..<20).map { "d\($0)" })
            #expect(a.harness.outbox.messages(to: alice.session).allSatisfy { $0.channelType == .user && $0.channelName == "bob" && $0.publisher == "bob" })
            await #expect(throws: RtmError.self) { try await b.publish(bob, .user, to: "nobody", "?") }
            _ = try await a.harness.bus.request(Logout(caller: alice))
            do {
                try await b.publish(bob, .user, to: "alice", "gone?")
                Issue.record("a message to a user who logged out everywhere was accepted")
            } catch {
                #expect((error as? RtmError)?.code == .channelReceiverOffline, "\(error)")
            }
            await stop(a, b)
        }
    }

    /// Forwards started one after another, none awaited (as a connection's pipelined publishes
    /// are): each reaches the other node in the order started and is answered as Redis replies,
    /// a message to a user online nowhere with `channelReceiverOffline`.
    @Test func userMessagesStartedTogetherArriveInOrderAndEachIsAnswered() async throws {
        try await RedisServer.with { redis in
            let a = try await node("a", on: redis)
            let b = try await node("b", on: redis)
            let alice = try await a.logIn("alice")
            let bob = try await b.logIn("bob")
            let answers = Mutex<[Int: Result<Done, RtmError>]>([:])
            let count = 300
            for number in 0..<count {
                let receiver = number % 10 == 9 ? "nobody" : "alice"
                b.harness.bus.start(
                    Publish(caller: bob, channelType: .user, channelName: receiver, payload: .string("s\(number)"))
                ) { result in answers.withLock { $0[number] = result } }
            }
            #expect(await eventually { answers.withLock { $0.count } == count })
            let toAlice = (0..<count).filter { $0 % 10 != 9 }
            #expect(await eventually { a.messages(to: alice).count == toAlice.count })
            #expect(a.messages(to: alice) == toAlice.map { "s\($0)" })
            for (number, answer) in answers.withLock({ $0 }) {
                switch answer {
                case .success: #expect(number % 10 != 9, "\(number)")
                case .failure(let error): #expect(number % 10 == 9 && error.code == .channelReceiverOffline, "\(number): \(error)")
                }
            }
            await stop(a, b)
        }
    }

    @Test func aUserWhoLogsOutAndInAgainAtOnceIsReachableEachTime() async throws {
        try await RedisServer.with { redis in
            let a = try await node("a", on: redis)
            let b = try await node("b", on: redis)
            let bob = try await b.logIn("bob")
            for round in 0..<20 {
                // A session ending (the node's close of the user still under way) and a new login
                // of the same user at once; whichever the session module takes first, alice has
                // one session afterwards, reachable from the other node.
                let old = try await a.logIn("alice")
                let ending = Task { _ = try? await a.harness.bus.request(Logout(caller: old)) }
                let alice = try await a.logIn("alice")
                await ending.value
                try await b.publish(bob, .user, to: "alice", "r\(round)")
                #expect(await eventually { a.messages(to: alice) == ["r\(round)"] }, "round \(round)")
                _ = try await a.harness.bus.request(Logout(caller: alice))
            }
            await stop(a, b)
        }
    }

    /// The same user id logging in on another node replaces the session here, as on one node:
    /// its client is told `sameUidLogin`; of two logins racing on two nodes, exactly one stays.
    @Test func aLoginOnAnotherNodeReplacesTheUsersSessionAndOfTwoRacingLoginsOneStays() async throws {
        try await RedisServer.with { redis in
            let a = try await ClusterNode.start("a", on: redis)
            let b = try await ClusterNode.start("b", on: redis)
            let first = try await a.logIn("alice")
            let second = try await b.logIn("alice")
            #expect(await eventually { a.harness.outbox.calls.contains(.disconnect(first.session, .sameUidLogin)) })
            #expect(!b.harness.outbox.calls.contains { if case .disconnect = $0 { true } else { false } })
            // The replaced session is gone: messages to alice reach the new one only.
            let bob = try await a.logIn("bob")
            try await a.publish(bob, .user, to: "alice", "hello")
            #expect(await eventually { b.messages(to: second) == ["hello"] })
            #expect(a.messages(to: first).isEmpty)

            // Racing logins: whatever order Redis takes them in, one session of the pair stays.
            for round in 0..<10 {
                let user = "racer-\(round)"
                async let onA = a.logIn(user)
                async let onB = b.logIn(user)
                let (fromA, fromB) = try await (onA, onB)
                func replaced(_ node: ClusterNode, _ caller: Caller) -> Bool {
                    node.harness.outbox.calls.contains(.disconnect(caller.session, .sameUidLogin))
                }
                #expect(await eventually { replaced(a, fromA) != replaced(b, fromB) }, "round \(round)")
                try await Task.sleep(for: .milliseconds(50))
                #expect(replaced(a, fromA) != replaced(b, fromB), "round \(round): both or neither replaced")
            }
            await a.stop()
            await b.stop()
        }
    }

    @Test func aNodeStopsListeningOnceItsLastListenerIsGone() async throws {
        try await RedisServer.with { redis in
            let a = try await node("a", on: redis)
            try await redis.withClient { client in
                let alice = try await a.logIn("alice")
                let carol = try await a.logIn("carol")
                for caller in [alice, carol] { _ = try await a.harness.bus.request(Subscribe(caller: caller, channelName: "room")) }
                #expect(try await client.subscribers(of: "sb:m:{app:room}") == 1)
                #expect(try await client.subscribers(of: "sb:u:{app:alice}") == 1)
                _ = try await a.harness.bus.request(Unsubscribe(caller: alice, channelName: "room"))
                #expect(try await client.subscribers(of: "sb:m:{app:room}") == 1)
                _ = try await a.harness.bus.request(Logout(caller: carol))
                #expect(await eventuallyAsync { try await client.subscribers(of: "sb:m:{app:room}") == 0 })
                _ = try await a.harness.bus.request(Logout(caller: alice))
                #expect(await eventuallyAsync { try await client.subscribers(of: "sb:u:{app:alice}") == 0 })
            }
            await stop(a)
        }
    }

    @Test func eachBeatProvesThePubSubLinkAndCountsTheLiveNodes() async throws {
        try await RedisServer.with { redis in
            let a = try await node("a", on: redis)
            let b = try await node("b", on: redis)
            #expect(!a.link.pubSubProven(now: a.harness.clock.now))
            for node in [a, b] {
                #expect(await node.harness.clock.waitForSleepers())
                node.harness.clock.advance(by: .seconds(1))
            }
            #expect(await eventually { a.link.pubSubProven(now: a.harness.clock.now) && b.link.pubSubProven(now: b.harness.clock.now) })
            #expect(await eventually { a.link.liveNodes == 2 || b.link.liveNodes == 2 })
            // Three seconds on without a probe coming back: no longer proven.
            #expect(await a.harness.clock.waitForSleepers())
            await redis.pause()
            a.harness.clock.advance(by: .seconds(4))
            #expect(!a.link.pubSubProven(now: a.harness.clock.now))
            await redis.resume()
            await stop(a, b)
        }
    }

    /// Redis restarted with nothing kept (no persistence): once the links are back, each node
    /// lists its users online again, so a user on another node is still reachable, and a new login
    /// still replaces an older session of its user (login numbers keep growing).
    @Test func afterRedisRestartsEmptyUsersAreReachableAndLoginsStillReplace() async throws {
        try await RedisServer.with { redis in
            let a = try await node("a", on: redis)
            let b = try await node("b", on: redis)
            let alice = try await a.logIn("alice")
            let bob = try await b.logIn("bob")
            _ = try await b.harness.bus.request(Subscribe(caller: bob, channelName: "room"))
            for _ in 0..<3 { _ = try await b.logIn("carol") }
            let carol = try await b.logIn("carol")
            try await redis.kill()
            try await redis.start()
            #expect(await eventually { a.link.isConnected && b.link.isConnected })
            #expect(await eventually { b.link.received.gaps > 0 })
            // Bob is told that messages of his user channel, and of the room he subscribes to, may be lost.
            #expect(await eventually {
                let pushes = b.harness.outbox.pushes(to: bob.session)
                return pushes.contains(.session(.messagesMayBeLost(channelType: .user, channel: "bob")))
                    && pushes.contains(.session(.messagesMayBeLost(channelType: .message, channel: "room")))
            })
            #expect(await eventuallyAsync {
                try await a.publish(alice, .user, to: "bob", "after the restart")
                return b.messages(to: bob).contains("after the restart")
            })
            _ = try await a.logIn("carol")
            #expect(await eventually { b.harness.outbox.calls.contains(.disconnect(carol.session, .sameUidLogin)) })
            await stop(a, b)
        }
    }

    @Test func withRedisGoneASubscribeFailsWithItsTimeoutAndTheLinkSaysSo() async throws {
        try await RedisServer.with { redis in
            let a = try await node("a", on: redis)
            let alice = try await a.logIn("alice")
            let carol = try await a.logIn("carol")
            _ = try await a.harness.bus.request(Subscribe(caller: carol, channelName: "lobby"))
            #expect(a.link.isConnected)
            try await redis.kill()
            #expect(await eventually { !a.link.isConnected })
            do {
                _ = try await a.harness.bus.request(Subscribe(caller: alice, channelName: "room"))
                Issue.record("a subscribe was accepted with no Redis")
            } catch {
                #expect((error as? RtmError)?.code == .channelSubscribeTimeout, "\(error)")
                #expect((error as? RtmError)?.operation == Subscribe.operation)
            }
            // A publish still reaches this node's subscribers; what other nodes missed is counted.
            try await a.publish(alice, .message, to: "lobby", "local")
            #expect(a.messages(to: carol) == ["local"])
            #expect(await eventually { a.link.received.notRelayed == 1 })
            // A user's message that must go through Redis fails with its timeout, never silently.
            do {
                try await a.publish(alice, .user, to: "bob", "lost?")
                Issue.record("a user message was accepted with no Redis")
            } catch {
                #expect((error as? RtmError)?.code == .channelPublishMessageTimeout, "\(error)")
                #expect((error as? RtmError)?.operation == Publish.operation)
            }
            await stop(a)
        }
    }
}
