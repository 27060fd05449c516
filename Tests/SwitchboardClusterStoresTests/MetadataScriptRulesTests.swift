import Testing
import SwitchboardClusterStores
import SwitchboardCore
import SwitchboardStorage
import SwitchboardStorageContract
import SwitchboardTestKit

/// The scripts run the compare-and-set rules in Lua; `MetadataRules` runs them in Swift. The same
/// random writes, lease expiries and session ends, given to the Redis store and to the in-memory
/// store, get the same answers: the same sets and revisions, the same refusals with the same
/// reasons. (On one set, the in-memory store's one sequence numbers like the set's own.)
@Suite(.timeLimit(.minutes(3))) struct MetadataScriptRulesTests {
    let room = MetadataTarget.channel(ChannelKey(app: "app", .stream, "room"))

    /// What either store answered.
    enum Outcome: Equatable {
        case commits([MetadataCommit])
        case refused(RtmErrorCode, String)
    }

    func outcome(_ body: () async throws(RtmError) -> [MetadataCommit]) async -> Outcome {
        do {
            return .commits(try await body())
        } catch {
            return .refused(error.code, error.reason)
        }
    }

    @Test func randomStepsGetTheSameAnswersFromBothStores() async throws {
        var refusals = Set<RtmErrorCode>()
        for seed in 1...4 as ClosedRange<UInt64> {
            refusals.formUnion(try await compareStores(seed: seed))
        }
        // Every rule refused something.
        #expect(
            refusals == [
                .storageOutdatedRevision, .storageInvalidMetadataItem, .storageInvalidMetadataInstance,
                .storageMetadataItemExceedLimitation, .storageMetadataLengthOverflow, .storageLockNotAcquired,
            ], "\(refusals)")
    }

    /// Runs the steps of `seed` on both stores, side by side; returns the codes they refused with.
    func compareStores(seed: UInt64) async throws -> Set<RtmErrorCode> {
        try await RedisServer.with { redis in
            let shared = try await redis.metadataStore()
            let memory = InMemoryMetadataStore()
            try await memory.open()
            var random = SeededGenerator(seed: seed)
            var limits = Limits()
            limits.storage.itemsPerSet = 4
            limits.storage.setMaxBytes = 30
            var now: UInt64 = 1_000
            var revision: Int64 = 0
            var refusals = Set<RtmErrorCode>()
            for step in 0..<500 {
                let choice = random.next(below: 10)
                let (a, b): (Outcome, Outcome)
                if choice == 0 {
                    now += UInt64(random.next(below: 40))
                    let time = WallClockTime(millisecondsSince1970: now)
                    a = await outcome { () throws(RtmError) in try await shared.removeExpired(now: time) }
                    b = await outcome { () throws(RtmError) in try await memory.removeExpired(now: time) }
                } else if choice == 1 {
                    let session = SessionID(UInt64(1 + random.next(below: 2)))
                    a = await outcome { () throws(RtmError) in try await shared.removeItems(of: session) }
                    b = await outcome { () throws(RtmError) in try await memory.removeItems(of: session) }
                } else {
                    let write = randomWrite(&random, revision: revision, now: now)
                    a = await outcome { () throws(RtmError) in [try await shared.write(write, to: room, limits: limits)] }
                    b = await outcome { () throws(RtmError) in [try await memory.write(write, to: room, limits: limits)] }
                }
                #expect(a == b, "seed \(seed) step \(step)")
                guard a == b else { break }
                switch a {
                case .commits(let commits): revision = commits.last?.revision ?? revision
                case .refused(let code, _): refusals.insert(code)
                }
                #expect(try await shared.read(room) == memory.read(room), "seed \(seed) step \(step)")
            }
            #expect(revision > 30, "seed \(seed): only \(revision) changes")
            await shared.close()
            return refusals
        }
    }

    /// A write of the kinds, keys, revisions and leases that make every rule answer now and then.
    func randomWrite(_ random: inout SeededGenerator, revision: Int64, now: UInt64) -> MetadataWrite {
        let kind = [MetadataWriteKind.set, .set, .set, .update, .remove][random.next(below: 5)]
        var keys = ["a", "b", "c", "d", "e"].filter { _ in random.next(below: 3) == 0 }
        if keys.isEmpty && kind != .remove { keys = ["b"] }
        func someRevision(_ random: inout SeededGenerator) -> Int64 {
            [-1, -1, revision, revision - 1, revision + 1, 1][random.next(below: 6)]
        }
        let items = keys.map { key in
            let value = kind == .remove ? [] : random.bytes(count: [0, 1, 2, 3, 14][random.next(below: 5)], in: 0x61...0x7A)
            var item = MetadataWrite.Item(
                key: key, value: value, size: value.count, expectedRevision: someRevision(&random))
            if kind != .remove {
                switch random.next(below: 5) {
                case 0: item.expiresAt = now + UInt64(random.next(below: 60))
                case 1: item.session = SessionID(UInt64(1 + random.next(below: 2)))
                default: break
                }
            }
            return item
        }
        var write = MetadataWrite(
            kind: kind, operation: "test", expectedMajorRevision: random.next(below: 4) == 0 ? someRevision(&random) : -1,
            items: items, updateTs: UInt64(random.next(below: 3)), author: ["", "alice", "bøb"][random.next(below: 3)])
        if random.next(below: 4) == 0 {
            write.fence = MetadataFence(lockName: ["L", "M"][random.next(below: 2)], token: UInt64(random.next(below: 6)))
        }
        return write
    }
}
