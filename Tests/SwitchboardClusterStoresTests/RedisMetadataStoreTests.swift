import Foundation
import Synchronization
import Testing
import SwitchboardCluster
import SwitchboardClusterStores
import SwitchboardCore
import SwitchboardRedis
import SwitchboardStorage
import SwitchboardStorageContract
import SwitchboardTestKit
import SwitchboardTransport

/// The Redis metadata store on a redis-server of each test's own: the contract every store keeps,
/// the same answers as the rules in Swift, and what only a store shared by nodes has.
@Suite(.timeLimit(.minutes(3))) struct RedisMetadataStoreTests {
    let room = MetadataTarget.channel(ChannelKey(app: "app", .message, "room"))
    let limits = Limits()

    @Test(arguments: MetadataStoreContract.allCases) func theStoreKeepsTheContract(scenario: MetadataStoreContract) async throws {
        try await RedisServer.with { redis in
            let store = try await redis.metadataStore()
            try await scenario.run(on: store)
            await store.close()
        }
    }

    @Test func aSetsRevisionsFollowEachOtherAndAreNeverReused() async throws {
        try await RedisServer.with { redis in
            let store = try await redis.metadataStore()
            var revisions: [Int64] = []
            revisions.append(try await store.write(.set([("a", "1")]), to: room, limits: limits).revision)
            revisions.append(try await store.write(.remove([]), to: room, limits: limits).revision)
            #expect(await errorCode { _ = try await store.write(.update([("a", "2")]), to: room, limits: limits) } == .storageInvalidMetadataItem)
            revisions.append(try await store.write(.set([("a", "1")]), to: room, limits: limits).revision)
            revisions.append(try await store.write(.set([("x", "1")]), to: .user(UserKey("app", "room")), limits: limits).revision)
            #expect(revisions == [1, 2, 3, 1])
            #expect(try await store.latestChange(of: room) == MetadataCommit(target: room, set: try await store.read(room), revision: 3))
            _ = try await store.write(.remove([]), to: room, limits: limits)
            #expect(try await store.latestChange(of: room) == MetadataCommit(target: room, set: nil, revision: 4))
            await store.close()
        }
    }

    @Test func eachChangeIsPublishedInRevisionOrderAsTheCommitItIs() async throws {
        try await RedisServer.with { redis in
            let store = try await redis.metadataStore()
            let (subscriber, group, published) = try await redis.recordPublished(on: MetadataKeys(room).channel)
            var commits: [MetadataCommit] = []
            var write = MetadataWrite.set([("a", "1"), ("b", "ä"), ("c", "")], author: "alice")
            write.items[0].expiresAt = 5_000
            write.items[1].session = SessionID(3)
            commits.append(try await store.write(write, to: room, limits: limits))
            commits.append(try await store.write(.update([("c", "2")]), to: room, limits: limits))
            commits += try await store.removeExpired(now: WallClockTime(millisecondsSince1970: 5_000))
            commits += try await store.removeItems(of: SessionID(3))
            commits.append(try await store.write(.remove([]), to: room, limits: limits))
            #expect(commits.map(\.revision) == [1, 2, 3, 4, 5])
            #expect(commits.map { $0.set?.items.map(\.key) } == [["a", "b", "c"], ["a", "b", "c"], ["b", "c"], ["c"], nil])
            #expect(await eventually { published.values.count == 5 })
            #expect(published.values.map { store.change(publishedAs: $0, of: room) } == commits)
            #expect(store.change(publishedAs: Array("garbage".utf8), of: room) == nil)
            await subscriber.close()
            await store.close()
            try await BlockingWork.run { group.shutdown() }
        }
    }

    @Test func sessionsAreEachNodesOwn() async throws {
        try await RedisServer.with { redis in
            let a = try await redis.metadataStore(node: "node-a")
            let b = try await redis.metadataStore(node: "node-b")
            // Both nodes have a session 1: each binds an item to its own.
            var write = MetadataWrite.set([("a's", "1")])
            write.items[0].session = SessionID(1)
            _ = try await a.write(write, to: room, limits: limits)
            write = MetadataWrite.set([("b's", "1"), ("b's other", "2")])
            write.items[0].session = SessionID(1)
            write.items[1].session = SessionID(2)
            _ = try await b.write(write, to: room, limits: limits)
            let ended = try await a.removeItems(of: SessionID(1))
            #expect(ended.map { $0.set?.values } == [["b's": "1", "b's other": "2"]])
            #expect(try await a.removeItems(of: SessionID(1)).isEmpty)
            // Node b restarts: opening its store keeps its earlier run's items (their sessions may
            // resume); each goes when its orphaned session ends (`endOrphan`), whatever its number.
            await b.close()
            let restarted = try await redis.metadataStore(node: "node-b")
            #expect(try await restarted.read(room)?.items.count == 2)
            _ = try await restarted.endOrphan(SessionID(1), ofNode: "node-b")
            _ = try await restarted.endOrphan(SessionID(2), ofNode: "node-b")
            #expect(try await restarted.read(room) == nil)
            await restarted.close()
            await a.close()
        }
    }

    @Test func fencesAreEachNodesAndEachRunsOwn() async throws {
        try await RedisServer.with { redis in
            let a = try await redis.metadataStore(node: "node-a")
            let b = try await redis.metadataStore(node: "node-b")
            func fenced(_ value: String, _ token: UInt64) -> MetadataWrite {
                var write = MetadataWrite.set([("owner", value)])
                write.fence = MetadataFence(lockName: "L", token: token)
                return write
            }
            _ = try await a.write(fenced("a", 40), to: room, limits: limits)
            #expect(await errorCode { _ = try await a.write(fenced("a, stale", 39), to: room, limits: limits) } == .storageLockNotAcquired)
            // Node b's lock L is another lock, with tokens of its own.
            _ = try await b.write(fenced("b", 1), to: room, limits: limits)
            // Node a's next run counts its tokens from 1 again.
            await a.close()
            let again = try await redis.metadataStore(node: "node-a")
            _ = try await again.write(fenced("a again", 1), to: room, limits: limits)
            #expect(try await again.read(room)?.values == ["owner": "a again"])
            _ = try await again.write(fenced("big", UInt64.max), to: room, limits: limits)
            #expect(await errorCode { _ = try await again.write(fenced("smaller", UInt64.max - 1), to: room, limits: limits) } == .storageLockNotAcquired)
            await again.close()
            await b.close()
        }
    }

    @Test func theSealingMarkerIsTheClustersAndSetOnce() async throws {
        try await RedisServer.with { redis in
            let a = try await redis.metadataStore(node: "node-a")
            let b = try await redis.metadataStore(node: "node-b")
            #expect(try await a.sealingMarker() == nil)
            #expect(try await !a.hasItems())
            try await a.setSealingMarker([1, 2, 3])
            #expect(try await b.sealingMarker() == [1, 2, 3])
            #expect(await errorCode { try await b.setSealingMarker([9]) } == .storageOperationFailed)
            _ = try await b.write(.set([("k", "v")]), to: .user(UserKey("app", "u")), limits: limits)
            #expect(try await a.hasItems())
            await a.close()
            await b.close()
        }
    }

    @Test func answeredWritesSurviveAKilledRedisThatSyncsEveryWrite() async throws {
        try await RedisServer.with(["--appendonly", "yes", "--appendfsync", "always"]) { redis in
            let store = try await redis.metadataStore()
            var answered: [MetadataTarget: Int64] = [:]
            for index in 0..<50 {
                let target = MetadataTarget.user(UserKey("app", "u\(index % 10)"))
                answered[target] = try await store.write(.set([("k\(index)", "\(index)")]), to: target, limits: limits).revision
            }
            try await redis.kill()
            #expect(await errorCode { _ = try await store.read(room) } != nil)
            try await redis.start()
            // Once the store has reconnected and Redis has loaded its file.
            #expect(await eventuallyAsync { try await store.read(room) == nil })
            for (target, revision) in answered {
                #expect(try await store.read(target)?.majorRevision == revision, "\(target)")
                #expect(try await store.read(target)?.items.count == 5, "\(target)")
            }
            // The sequence goes on where it was.
            let next = try await store.write(.set([("more", "1")]), to: .user(UserKey("app", "u0")), limits: limits)
            #expect(next.revision == (answered[.user(UserKey("app", "u0"))] ?? 0) + 1)
            await store.close()
        }
    }

    @Test func withRedisGoneCallsFailWithTheStorageCodes() async throws {
        try await RedisServer.with { redis in
            let store = try await redis.metadataStore()
            try await redis.kill()
            #expect(await eventually { !store.isConnected })
            #expect(await errorCode { _ = try await store.write(.set([("a", "1")]), to: room, limits: limits) } == .storageNotAvailable)
            #expect(await errorCode { _ = try await store.read(room) } == .storageNotAvailable)
            await store.close()
        }
        // A Redis that cannot be reached at start: the store does not open, naming it.
        let port = try await RedisServer.with { $0.port }
        let store = RedisMetadataStore(configuration: RedisConfiguration(url: RedisURL(host: "127.0.0.1", port: port)), nodeID: "n")
        do {
            try await store.open()
            Issue.record("opened with no Redis")
        } catch {
            #expect(error.message.contains("127.0.0.1:\(port)"), "\(error)")
        }
    }
}

/// Values a callback records, read by the test.
final class Recorded<Value: Sendable>: Sendable {
    private let recorded = Mutex<[Value]>([])
    func append(_ value: Value) { recorded.withLock { $0.append(value) } }
    var values: [Value] { recorded.withLock { $0 } }
}
