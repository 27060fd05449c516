import Synchronization
import Testing
import SwitchboardCore
import SwitchboardRedis
import SwitchboardTestKit
import SwitchboardWire

@testable import SwitchboardCluster

/// Each node's status, published with its beat and read by `ListClusterNodes` in one round trip:
/// nodes in one process on a real redis-server, each answering `CurrentNodeStatus` with a status
/// the test sets, as the server does.
@Suite(.timeLimit(.minutes(3))) struct NodeDirectoryTests {
    /// The status a node's bus answers `CurrentNodeStatus` with.
    final class StatusSource: Sendable {
        let status: Mutex<NodeStatus>
        init(_ status: NodeStatus) { self.status = Mutex(status) }
        func set(_ change: (inout NodeStatus) -> Void) { status.withLock { change(&$0) } }
    }

    static func status(_ apps: [AppID: AppLoad], ready: Bool = true, loggedIn: Int = 0) -> NodeStatus {
        NodeStatus(
            nodeID: nil, version: "0.1.0", url: "ws://127.0.0.1:9100", host: "127.0.0.1",
            startedAt: WallClockTime(millisecondsSince1970: 1_700_000_000_000),
            checks: [ReadinessState(name: "listener"), ReadinessState(name: "pubsub", problem: ready ? nil : "no probe came back")],
            awaitingLogin: 1, loggedIn: loggedIn, attachedSessions: loggedIn, detachedSessions: 2, apps: apps)
    }

    /// A node whose bus answers `CurrentNodeStatus` from `source` (none: answers nothing).
    func node(_ name: String, on redis: RedisServer, source: StatusSource?) async throws -> ClusterNode {
        let node = try await ClusterNode.start(name, on: redis)
        if let source { node.harness.bus.handle(CurrentNodeStatus.self) { _ in source.status.withLock { $0 } } }
        return node
    }

    /// Beats every node of `beating` (a second on each clock) until `reader`'s list of the nodes
    /// with `app`'s load satisfies `holds`, within the standard patience; returns the last list.
    func beat(
        _ beating: [ClusterNode], until holds: ([LiveNode]) -> Bool, reader: ClusterNode, app: AppID? = nil
    ) async -> [LiveNode] {
        let deadline = ContinuousClock.now + Patience.standard
        var list: [LiveNode] = []
        repeat {
            for node in beating {
                _ = await node.harness.clock.waitForSleepers()
                node.harness.clock.advance(by: .seconds(1))
            }
            for _ in 0..<20 {
                list = (try? await reader.harness.bus.request(ListClusterNodes(app: app))) ?? []
                if holds(list) { return list }
                try? await Task.sleep(for: .milliseconds(10))
            }
        } while ContinuousClock.now < deadline
        return list
    }

    @Test func eitherNodeReadsEveryLiveNodesStatusWithTheLoadOfTheAppAsked() async throws {
        try await RedisServer.with { redis in
            let first = StatusSource(Self.status(["app": AppLoad(sessions: 2, connections: 1), "other": AppLoad(sessions: 1)], loggedIn: 1))
            let second = StatusSource(Self.status(["app": AppLoad(sessions: 5, connections: 4)], ready: false, loggedIn: 4))
            let a = try await node("a", on: redis, source: first)
            // Every character a key part escapes, so Lua must find the keys as Swift named them.
            let b = try await node("b:{%}", on: redis, source: second)
            let nodes = [a, b]
            var expected = [
                LiveNode(nodeID: "a", status: Self.status(["app": AppLoad(sessions: 2, connections: 1)], loggedIn: 1)),
                LiveNode(nodeID: "b:{%}", status: Self.status(["app": AppLoad(sessions: 5, connections: 4)], ready: false, loggedIn: 4)),
            ]
            expected[0].status?.nodeID = "a"
            expected[1].status?.nodeID = "b:{%}"
            for reader in nodes {
                let list = await beat(nodes, until: { $0 == expected }, reader: reader, app: "app")
                #expect(list == expected)
            }
            #expect(expected[1].status?.isReady == false)
            // Without an app, no loads; an app a node lacks, none from it.
            var bare = expected
            for index in bare.indices { bare[index].status?.apps = [:] }
            #expect(try await a.harness.bus.request(ListClusterNodes()) == bare)
            var others = bare
            others[0].status?.apps = ["other": AppLoad(sessions: 1)]
            #expect(try await b.harness.bus.request(ListClusterNodes(app: "other")) == others)

            // A changed load, and an app gone: the next beat writes them.
            first.set { $0.apps = ["other": AppLoad(sessions: 3, connections: 3)] }
            var changed = others
            changed[0].status?.apps = ["other": AppLoad(sessions: 3, connections: 3)]
            #expect(await beat(nodes, until: { $0 == changed }, reader: b, app: "other") == changed)
            #expect(try await b.harness.bus.request(ListClusterNodes(app: "app")).first?.status?.apps == [:])
            await a.stop()
            await b.stop()
        }
    }

    @Test func thousandsOfAppsAreWrittenOnceThenByChangesAndWrittenAgainWhenRedisLosesThem() async throws {
        try await RedisServer.with { redis in
            // 6,000 apps: 12,000 values, over what Lua unpacks at once.
            var apps: [AppID: AppLoad] = [:]
            for index in 0..<6_000 { apps["app-\(index)"] = AppLoad(sessions: index % 7 + 1, connections: index % 3) }
            let source = StatusSource(Self.status(apps))
            let a = try await node("a", on: redis, source: source)
            func load(_ app: AppID) -> ([LiveNode]) -> Bool {
                { $0.first?.status?.apps == [app: apps[app] ?? AppLoad()] }
            }
            #expect(load("app-5999")(await beat([a], until: load("app-5999"), reader: a, app: "app-5999")))
            #expect(load("app-0")(try await a.harness.bus.request(ListClusterNodes(app: "app-0"))))

            apps["app-17"] = AppLoad(sessions: 100, connections: 99)
            source.set { $0.apps = apps }
            #expect(load("app-17")(await beat([a], until: load("app-17"), reader: a, app: "app-17")))

            // Redis lost the hash: the beat that finds it gone writes changes only, the next every app.
            try await redis.withClient { client in _ = try await client.send(bytes: [Array("DEL".utf8), NodeDirectory.appsKey(of: "a")]) }
            apps["app-18"] = AppLoad(sessions: 50, connections: 1)
            source.set { $0.apps = apps }
            #expect(load("app-18")(await beat([a], until: load("app-18"), reader: a, app: "app-18")))
            #expect(load("app-3000")(await beat([a], until: load("app-3000"), reader: a, app: "app-3000")))
            await a.stop()
        }
    }

    @Test func aNodeThatStopsBeatingDropsOutOnceItsRecordExpiresAndOneWithoutAStatusIsListedByName() async throws {
        try await RedisServer.with { redis in
            let a = try await node("a", on: redis, source: StatusSource(Self.status([:])))
            let b = try await node("b", on: redis, source: StatusSource(Self.status([:])))
            let quiet = try await node("quiet", on: redis, source: nil)
            let all = [a, b, quiet]
            let listed = await beat(all, until: { $0.map(\.nodeID) == ["a", "b", "quiet"] && $0[0].status != nil && $0[1].status != nil }, reader: a)
            #expect(listed.map(\.nodeID) == ["a", "b", "quiet"])
            #expect(listed.last?.status == nil)
            await b.stop()
            // Its record lasts three beats after its last (the read goes by the reader's clock):
            // still listed a second on, gone four seconds on at the latest.
            var listedAfter: [Bool] = []
            for _ in 0..<4 {
                for node in [a, quiet] { node.harness.clock.advance(by: .seconds(1)) }
                listedAfter.append(try await a.harness.bus.request(ListClusterNodes()).contains { $0.nodeID == "b" })
            }
            #expect(listedAfter.first == true && listedAfter.last == false, "b listed after each second: \(listedAfter)")
            let left = await beat([a, quiet], until: { $0.map(\.nodeID) == ["a", "quiet"] }, reader: a)
            #expect(left.map(\.nodeID) == ["a", "quiet"])
            await a.stop()
            await quiet.stop()
        }
    }

    @Test func aStatusReadsBackAsItWasWrittenAndAnotherLayoutDoesNot() throws {
        var status = Self.status([:], ready: false, loggedIn: 3)
        status.nodeID = "n:1"
        #expect(try NodeStatusRecord.decoded(NodeStatusRecord.encoded(status)) == status)
        status.nodeID = nil
        status.checks = []
        #expect(try NodeStatusRecord.decoded(NodeStatusRecord.encoded(status)) == status)
        var other = MessagePackWriter()
        other.writeArrayHeader(11)
        other.writeInteger(2)
        #expect(throws: WireError.self) { try NodeStatusRecord.decoded(other.bytes) }
        #expect(NodeStatusRecord.decodedLoad(NodeStatusRecord.encoded(AppLoad(sessions: 12, connections: 7))) == AppLoad(sessions: 12, connections: 7))
        #expect(NodeStatusRecord.decodedLoad(Array("12".utf8)) == nil)

        // A record is read from Redis defensively: every cut is refused, random byte changes never
        // crash the reader (some land in a name or a count and still read).
        let record = NodeStatusRecord.encoded(Self.status(["app": AppLoad(sessions: 2, connections: 3)], ready: true, loggedIn: 2))
        for length in 0..<record.count { #expect((try? NodeStatusRecord.decoded(Array(record.prefix(length)))) == nil) }
        var generator = SeededGenerator(seed: 5)
        var read = 0
        for _ in 0..<1000 {
            var mutated = record
            mutated[Int.random(in: 0..<mutated.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            if (try? NodeStatusRecord.decoded(mutated)) != nil { read += 1 }
        }
        #expect(read > 0 && read < 1000, "\(read) of 1,000 mutated records read")
    }

    @Test func aBeatWritesOnlyWhatChangedUnlessWhatRedisHoldsIsUnknown() {
        var publication = AppLoadPublication()
        let one: [AppID: AppLoad] = ["a": AppLoad(sessions: 1), "b": AppLoad(sessions: 2, connections: 2)]
        let first = publication.changes(to: one)
        #expect(first.replacesAll && first.set.map(\.app) == ["a", "b"] && first.removed.isEmpty)
        publication.wrote(first, toward: one, hashWasThere: false)
        #expect(publication.changes(to: one) == .init(replacesAll: false, set: [], removed: []))

        let two: [AppID: AppLoad] = ["b": AppLoad(sessions: 3, connections: 2), "c": AppLoad(connections: 1)]
        let changes = publication.changes(to: two)
        #expect(!changes.replacesAll && changes.set.map(\.app) == ["b", "c"] && changes.removed == ["a"])
        // The hash was gone before this write (Redis lost it): what it holds is unknown, so the
        // next beat writes every app.
        publication.wrote(changes, toward: two, hashWasThere: false)
        #expect(publication.changes(to: two).replacesAll)
        publication.wrote(publication.changes(to: two), toward: two, hashWasThere: false)
        #expect(!publication.changes(to: two).replacesAll)
        publication.failed()
        #expect(publication.changes(to: two).replacesAll)
        // No app: nothing to lose, so a missing hash is what it should be.
        var empty = AppLoadPublication()
        empty.wrote(empty.changes(to: [:]), toward: [:], hashWasThere: false)
        empty.wrote(empty.changes(to: [:]), toward: [:], hashWasThere: false)
        #expect(!empty.changes(to: [:]).replacesAll)
    }
}
