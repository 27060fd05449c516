import Testing
import SwitchboardCluster
import SwitchboardCore
import SwitchboardRedis
import SwitchboardTestKit
import SwitchboardTransport

/// Nodes in one process, each with the storage module over the Redis metadata store and the
/// cluster link, on a real redis-server: metadata is one for the whole cluster, and listeners on
/// every node hear every change, in revision order.
@Suite(.timeLimit(.minutes(3))) struct ClusterStorageTests {
    let room = ChannelKey(app: "app", .message, "room")

    func values(_ metadata: Metadata) -> [String: String] {
        Dictionary(uniqueKeysWithValues: metadata.items.map { ($0.key, $0.value) })
    }

    /// Nodes a and b with storage; Alice logged in on a, Bob on b listening to the room's metadata
    /// (his snapshot in).
    func aliceAndBob(on redis: RedisServer) async throws -> (a: ClusterNode, b: ClusterNode, alice: Caller, bob: Caller) {
        let a = try await ClusterNode.start("a", on: redis, storage: true)
        let b = try await ClusterNode.start("b", on: redis, storage: true)
        let alice = try await a.logIn("alice")
        let bob = try await b.logIn("bob")
        _ = try await b.harness.bus.request(Subscribe(caller: bob, channelName: "room", features: [.metadata]))
        #expect(await eventually { b.storageEvents(to: bob).count == 1 })
        return (a, b, alice, bob)
    }

    @Test func listenersOnAnotherNodeGetEveryChangeInRevisionOrder() async throws {
        try await RedisServer.with { redis in
            let a = try await ClusterNode.start("a", on: redis, storage: true)
            let b = try await ClusterNode.start("b", on: redis, storage: true)
            let alice = try await a.logIn("alice")
            let bob = try await b.logIn("bob")
            let carol = try await b.logIn("carol")
            _ = try await b.harness.bus.request(Subscribe(caller: bob, channelName: "room", features: [.message, .metadata]))
            _ = try await b.harness.bus.request(SubscribeUserMetadata(caller: carol, userId: "alice"))
            #expect(await eventually { b.storageEvents(to: bob).count == 1 && b.storageEvents(to: carol).count == 1 })
            for number in 1...20 {
                let data = Metadata(items: [MetadataItem(key: "n", value: "\(number)")])
                _ = try await a.harness.bus.request(SetChannelMetadata(caller: alice, channelType: .message, channelName: "room", data: data))
                _ = try await a.harness.bus.request(SetUserMetadata(caller: alice, userId: "alice", data: data))
            }
            #expect(await eventually { b.storageEvents(to: bob).count == 21 && b.storageEvents(to: carol).count == 21 })
            for caller in [bob, carol] {
                let events = b.storageEvents(to: caller)
                #expect(events.map(\.eventType) == [.snapshot] + Array(repeating: .update, count: 20), "\(caller)")
                #expect(events.map(\.data.majorRevision) == Array(0...20), "\(caller)")
                #expect(events.dropFirst().map { values($0.data)["n"] } == (1...20).map { "\($0)" }, "\(caller)")
            }
            // What b writes, its own listener hears once, and a reads.
            _ = try await b.harness.bus.request(
                SetChannelMetadata(caller: bob, channelType: .message, channelName: "room", data: Metadata(items: [MetadataItem(key: "n", value: "from b")])))
            #expect(await eventually { b.storageEvents(to: bob).count == 22 })
            let read = try await a.harness.bus.request(GetChannelMetadata(caller: alice, channelType: .message, channelName: "room"))
            #expect(values(read) == ["n": "from b"] && read.majorRevision == 21)
            #expect(await eventually { b.link.received.metadataChanges >= 41 })
            #expect(b.storageEvents(to: bob).count == 22)

            // Once its last listener is gone, a node stops listening.
            let roomChanges = String(decoding: MetadataKeys(.channel(room)).channel.name, as: UTF8.self)
            let aliceChanges = String(decoding: MetadataKeys(.user(UserKey("app", "alice"))).channel.name, as: UTF8.self)
            try await redis.withClient { client in
                #expect(try await client.subscribers(of: roomChanges) == 1)
                #expect(try await client.subscribers(of: aliceChanges) == 1)
                _ = try await b.harness.bus.request(Unsubscribe(caller: bob, channelName: "room"))
                _ = try await b.harness.bus.request(UnsubscribeUserMetadata(caller: carol, userId: "alice"))
                #expect(await eventuallyAsync { try await client.subscribers(of: roomChanges) == 0 })
                #expect(await eventuallyAsync { try await client.subscribers(of: aliceChanges) == 0 })
            }
            await a.stop()
            await b.stop()
        }
    }

    @Test func twentyWritersOnThreeNodesHaveExactlyOneWinnerPerRevision() async throws {
        try await RedisServer.with { redis in
            var nodes: [ClusterNode] = []
            for name in ["a", "b", "c"] { nodes.append(try await ClusterNode.start(name, on: redis, storage: true)) }
            let watcher = try await nodes[2].logIn("watcher")
            _ = try await nodes[2].harness.bus.request(Subscribe(caller: watcher, channelName: "room", features: [.metadata]))
            var writers: [(ClusterNode, Caller)] = []
            for index in 0..<20 { writers.append((nodes[index % 3], try await nodes[index % 3].logIn("writer-\(index)"))) }
            let (first, firstCaller) = writers[0]
            _ = try await first.harness.bus.request(
                SetChannelMetadata(caller: firstCaller, channelType: .message, channelName: "room", data: Metadata(items: [MetadataItem(key: "bid", value: "0")])))
            // Each writer reads the bid's revision on its node and writes under it, again and again.
            let wins = await withTaskGroup(of: [Int64].self) { group in
                for (index, (node, caller)) in writers.enumerated() {
                    group.addTask {
                        var won: [Int64] = []
                        for attempt in 0..<6 {
                            guard
                                let read = try? await node.harness.bus.request(
                                    GetChannelMetadata(caller: caller, channelType: .message, channelName: "room")),
                                let revision = read.items.first?.revision
                            else { continue }
                            let bid = MetadataItem(key: "bid", value: "\(index)-\(attempt)", revision: revision)
                            do {
                                _ = try await node.harness.bus.request(
                                    UpdateChannelMetadata(caller: caller, channelType: .message, channelName: "room", data: Metadata(items: [bid])))
                                won.append(revision)
                            } catch {
                                #expect((error as? RtmError)?.code == .storageOutdatedRevision, "\(error)")
                            }
                        }
                        return won
                    }
                }
                return await group.reduce(into: [Int64]()) { $0 += $1 }
            }
            let final = try await nodes[1].harness.bus.request(GetChannelMetadata(caller: writers[1].1, channelType: .message, channelName: "room"))
            // One winner per revision, every revision some write's: the set's revision counts the
            // successful writes (the first set included).
            #expect(wins.count > 1)
            #expect(wins.sorted() == Array(1..<final.majorRevision), "\(wins.sorted()) and revision \(final.majorRevision)")
            #expect(final.majorRevision == Int64(wins.count) + 1)
            #expect(final.items.first?.revision == final.majorRevision)
            // The watcher on a third node heard every change after its snapshot, in revision order,
            // up to the last: its node's own changes waited for the other nodes' earlier ones.
            #expect(await eventually { nodes[2].storageEvents(to: watcher).last?.data.majorRevision == final.majorRevision }, "\(nodes[2].storageEvents(to: watcher).map(\.data.majorRevision)) of \(final.majorRevision)")
            let heard = nodes[2].storageEvents(to: watcher).map(\.data.majorRevision)
            #expect(zip(heard, heard.dropFirst()).allSatisfy { $1 == $0 + 1 }, "\(heard)")
            for node in nodes { await node.stop() }
        }
    }

    @Test func leasesAndSessionBoundItemsGoWhicheverNodeRemovesThem() async throws {
        try await RedisServer.with { redis in
            let (a, b, alice, bob) = try await aliceAndBob(on: redis)
            let items = [
                MetadataItem(key: "offer", value: "5", lease: .timeToLive(milliseconds: 2_500)),
                MetadataItem(key: "seat", value: "3", lease: .session), MetadataItem(key: "name", value: "x"),
            ]
            _ = try await a.harness.bus.request(SetChannelMetadata(caller: alice, channelType: .message, channelName: "room", data: Metadata(items: items)))
            #expect(await eventually { b.storageEvents(to: bob).count == 2 })
            // Node b's sweep finds node a's lease run out.
            #expect(await b.harness.clock.waitForSleepers(count: 3))
            b.harness.clock.advance(by: .seconds(3))
            #expect(await eventually { b.storageEvents(to: bob).count == 3 })
            #expect(b.storageEvents(to: bob).last.map { values($0.data) } == ["seat": "3", "name": "x"])
            // Alice's session ends on node a: its item goes for bob on node b.
            _ = try await a.harness.bus.request(Logout(caller: alice))
            #expect(await eventually { b.storageEvents(to: bob).count == 4 })
            #expect(b.storageEvents(to: bob).last.map { values($0.data) } == ["name": "x"])
            await a.stop()
            await b.stop()
        }
    }

    @Test func aNodeWhosePubSubLinkDroppedReadsItsSetsAgain() async throws {
        try await RedisServer.with { redis in
            let (a, b, alice, bob) = try await aliceAndBob(on: redis)
            _ = try await a.harness.bus.request(
                SetChannelMetadata(caller: alice, channelType: .message, channelName: "room", data: Metadata(items: [MetadataItem(key: "n", value: "1")])))
            #expect(await eventually { b.storageEvents(to: bob).count == 2 })
            // A change whose message node b never got: the set and its revision, as the script
            // writes them, with nothing published.
            let keys = MetadataKeys(.channel(room))
            try await redis.withClient { client in
                _ = try await client.send(bytes: [Array("SET".utf8), keys.set, Array("1:11:21:n1:21:11:21:00:4:10240:0:".utf8)])
                _ = try await client.send(bytes: [Array("SET".utf8), keys.revision, Array("2".utf8)])
                #expect(b.storageEvents(to: bob).count == 2)
                _ = try await client.send(["CLIENT", "KILL", "TYPE", "pubsub"])
            }
            #expect(await eventually { b.storageEvents(to: bob).count == 3 })
            let last = b.storageEvents(to: bob).last
            #expect(last?.data.majorRevision == 2 && last.map { values($0.data) } == ["n": "2"])
            #expect(b.link.received.gaps > 0)
            await a.stop()
            await b.stop()
        }
    }
}
