import Testing
import SwitchboardCluster
import SwitchboardClusterStores
import SwitchboardCore
import SwitchboardPresence
import SwitchboardPresenceContract
import SwitchboardRedis
import SwitchboardTestKit
import SwitchboardTransport

/// The Redis presence store on a redis-server of each test's own: the contract every presence
/// store keeps, and what only a store shared by nodes has.
@Suite(.timeLimit(.minutes(3))) struct RedisPresenceStoreTests {
    let room = ChannelKey(app: "app", .message, "room")
    let start = WallClockTime(millisecondsSince1970: 1_700_000_000_000)

    @Test(arguments: PresenceStoreContract.allCases) func theStoreKeepsTheContract(scenario: PresenceStoreContract) async throws {
        try await RedisServer.with { redis in
            let store = try await redis.presenceStore()
            try await scenario.run(on: store)
            await store.close()
        }
    }

    @Test func sessionsAreEachNodesOwnAndTheRosterIsOne() async throws {
        try await RedisServer.with { redis in
            let a = try await redis.presenceStore(node: "node-a")
            let b = try await redis.presenceStore(node: "node-b")
            // Both nodes have a session 1: two sessions, two users, one roster.
            let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
            let bob = Caller(app: "app", userId: "bob", session: SessionID(1))
            _ = try await a.join(alice, room, features: [.presence])
            #expect(try await b.join(bob, room, features: [.presence]).occupancy == 2)
            #expect(try await a.members(of: room, after: 0, limit: 10, budget: .max, withStates: false).users.map(\.userId) == ["alice", "bob"])
            // Each node's listeners are its own sessions.
            #expect(try await a.listeners(of: room) == [SessionID(1)])
            #expect(try await b.listeners(of: room) == [SessionID(1)])
            _ = try await a.setState(of: alice.user, in: room, items: [StateItem(key: "k", value: "v")], limits: Limits())
            #expect(try await b.state(of: alice.user, in: room) == MemberState(visible: true, states: ["k": "v"]))
            // Node b's session 1 leaving is bob leaving, not alice.
            #expect(try await b.leave(bob, room)?.user == "bob")
            #expect(try await a.visibleChannels(of: alice.user) == [room])
            try await a.record(.opened, of: alice, at: start)
            #expect(try await b.presence(of: [alice.user, bob.user], now: start).map(\.online) == [true, false])
            await a.close()
            await b.close()
        }
    }

    @Test func eachChangeOthersAreToldIsPublishedNumberedAsTheNodesReadIt() async throws {
        try await RedisServer.with { redis in
            let a = try await redis.presenceStore(node: "node-a")
            let b = try await redis.presenceStore(node: "node-b")
            let (subscriber, group, published) = try await redis.recordPublished(on: PresenceKeys(room).events)
            let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
            let bob = Caller(app: "app", userId: "bob", session: SessionID(1))
            _ = try await a.join(alice, room, features: [.presence])
            _ = try await b.join(bob, room, features: [.beQuiet])  // quiet: nothing to tell
            _ = try await a.join(alice, room, features: [])  // the same visibility: nothing to tell
            _ = try await a.setState(of: alice.user, in: room, items: [StateItem(key: "k", value: "v")], limits: Limits(), by: alice.session, shows: true)
            _ = try await a.setState(of: alice.user, in: room, items: [StateItem(key: "k", value: "w")], limits: Limits(), by: alice.session, shows: false)
            _ = try await b.removeState(of: alice.user, in: room, keys: [], by: nil, shows: true)
            _ = try await b.leave(bob, room, timedOut: true)  // quiet: nothing to tell
            _ = try await a.leave(alice, room, timedOut: true)
            #expect(await eventually { published.values.count == 4 })
            let fromA = published.values.compactMap { a.change(publishedAs: $0) }
            let fromB = published.values.compactMap { b.change(publishedAs: $0) }
            #expect(fromA.map(\.kind) == [.joined, .stateChanged, .stateChanged, .timedOut])
            #expect(fromA.map(\.sequence) == fromA.map(\.sequence).sorted() && Set(fromA.map(\.sequence)).count == 4)
            #expect(fromA.map(\.states) == [[:], ["k": "v"], [:], [:]])
            #expect(fromA.map(\.firstOrLast) == [true, false, false, true])
            #expect(fromA.map(\.occupancy) == [1, 1, 1, 0])
            // The session that made a change is this node's on node a only.
            #expect(fromA.map(\.except) == [alice.session, alice.session, nil, alice.session])
            #expect(fromB.map(\.except) == [nil, nil, nil, nil])
            // A snapshot says which change it shows last.
            _ = try await a.join(alice, room, features: [.presence])
            let snapshot = try await b.snapshot(of: room, limit: 10)
            #expect(snapshot.sequence == fromA.last!.sequence + 1 && snapshot.users.map(\.userId) == ["alice"])
            #expect(a.change(publishedAs: [0x93, 1, 2, 3]) == nil)
            await subscriber.close()
            try await BlockingWork.run { group.shutdown() }
            await a.close()
            await b.close()
        }
    }

    /// Redis lost everything: each node writes back its own memberships, with their users'
    /// states (one a session took over from another node included), told as joins; a second
    /// write-back finds nothing lost; a session that left is not written back.
    @Test func aWriteBackRestoresOnlyWhatRedisLostWithTheStates() async throws {
        try await RedisServer.with { redis in
            let a = try await redis.presenceStore(node: "node-a")
            let b = try await redis.presenceStore(node: "node-b")
            let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
            let bob = Caller(app: "app", userId: "bob", session: SessionID(2))
            let carol = Caller(app: "app", userId: "carol", session: SessionID(3))
            _ = try await a.join(alice, room, features: [.presence])
            _ = try await a.setState(of: alice.user, in: room, items: [StateItem(key: "k", value: "v")], limits: Limits(), by: alice.session, shows: true)
            _ = try await b.join(bob, room, features: [.beQuiet])
            _ = try await b.setState(of: bob.user, in: room, items: [StateItem(key: "q", value: "1")], limits: Limits(), by: bob.session, shows: false)
            _ = try await a.join(carol, room, features: [])
            _ = try await a.leave(carol, room)
            #expect(try await a.restore() == 0)
            // Bob's session moves from node b to node a, with his state.
            #expect(try await a.takeOver(bob, fromNode: "node-b").map(\.channel) == [room])
            // Node b ends its copy (the moved announcement): its leave finds nothing in Redis.
            #expect(try await b.leave(bob, room) == nil)
            _ = try await redis.send(["FLUSHALL"])
            let (subscriber, group, published) = try await redis.recordPublished(on: PresenceKeys(room).events)
            #expect(try await b.restore() == 0)
            #expect(try await a.restore() == 2)
            #expect(try await a.members(of: room, after: 0, limit: 10, budget: .max, withStates: true).users == [
                UserState(userId: "alice", states: ["k": "v"])
            ])
            #expect(try await b.state(of: bob.user, in: room) == MemberState(visible: false, states: ["q": "1"]))
            #expect(try await b.listeners(of: room) == [])
            #expect(try await a.listeners(of: room) == [alice.session])
            #expect(try await b.presence(of: [alice.user, bob.user, carol.user], now: start).map(\.online) == [true, true, false])
            #expect(try await a.restore() == 0)
            #expect(await eventually { published.values.count == 1 })
            #expect(published.values.compactMap { b.change(publishedAs: $0) }.map(\.kind) == [.joined])
            await subscriber.close()
            try await BlockingWork.run { group.shutdown() }
            await a.close()
            await b.close()
        }
    }

    /// A join Redis could not take (it was down) is kept as the node's, and the write-back makes
    /// it once Redis is back.
    @Test func aJoinRedisDidNotTakeIsMadeByTheWriteBack() async throws {
        try await RedisServer.with { redis in
            let a = try await redis.presenceStore(node: "node-a")
            let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
            try await redis.kill()
            await #expect(throws: RtmError.self) { _ = try await a.join(alice, room, features: [.presence]) }
            try await redis.start()
            #expect(await eventuallyAsync { (try? await a.restore()) == 1 })
            #expect(try await a.members(of: room, after: 0, limit: 10, budget: .max, withStates: false).users.map(\.userId) == ["alice"])
            #expect(try await a.listeners(of: room) == [alice.session])
            await a.close()
        }
    }

    @Test func aNodesSessionsEndAsTimedOutOnceAndARestartKeepsItsEarlierRun() async throws {
        try await RedisServer.with { redis in
            let a = try await redis.presenceStore(node: "node-a")
            let b = try await redis.presenceStore(node: "node-b")
            let stream = ChannelKey(app: "app", .stream, "room")
            let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
            let bob = Caller(app: "app", userId: "bob", session: SessionID(1))
            for channel in [room, stream] { _ = try await a.join(alice, channel, features: [.presence]) }
            _ = try await b.join(bob, room, features: [.presence])
            try await a.record(.opened, of: alice, at: start)
            try await b.record(.opened, of: bob, at: start)
            // Node a is found dead: its sessions end, node b's stay.
            let later = WallClockTime(millisecondsSince1970: start.millisecondsSince1970 + 5_000)
            #expect(try await b.endSessions(ofNode: "node-a", now: later) == 1)
            #expect(try await b.endSessions(ofNode: "node-a", now: later) == 0)
            #expect(try await b.members(of: room, after: 0, limit: 10, budget: .max, withStates: false).users.map(\.userId) == ["bob"])
            #expect(try await b.occupancy(of: stream) == 0)
            #expect(try await b.visibleChannels(of: alice.user) == [])
            #expect(
                try await b.presence(of: [alice.user, bob.user], now: later)
                    == [UserPresence(userId: "alice", online: false, lastSeen: later.millisecondsSince1970), UserPresence(userId: "bob", online: true, lastSeen: later.millisecondsSince1970)])
            // Node b restarts: opening its store keeps its earlier run's sessions (the cluster link
            // reaps that run as a dead node's, so they may resume); ended, they go.
            await b.close()
            let again = try await redis.presenceStore(node: "node-b")
            #expect(try await again.occupancy(of: room) == 1)
            #expect(try await again.endSessions(ofNode: "node-b", now: later) == 1)
            #expect(try await again.occupancy(of: room) == 0)
            #expect(try await again.presence(of: [bob.user], now: later)[0].online == false)
            await a.close()
            await again.close()
        }
    }
}
