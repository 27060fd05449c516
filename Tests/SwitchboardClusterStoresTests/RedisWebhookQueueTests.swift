import Foundation
@testable import SwitchboardClusterStores
import SwitchboardCore
import SwitchboardRedis
import SwitchboardTestKit
import SwitchboardWebhooks
import Testing

/// A node's webhook queue in the cluster's Redis: what it keeps survives the node, and what a
/// dead node left is taken over once, in its order, by whichever node asks first.
@Suite(.timeLimit(.minutes(2))) struct RedisWebhookQueueTests {
    func queue(_ redis: RedisServer, node: String) -> RedisWebhookQueue {
        RedisWebhookQueue(configuration: RedisConfiguration(url: RedisURL(host: "127.0.0.1", port: redis.port)), nodeID: node)
    }

    func delivery(_ sequence: Int64, _ event: String, body: [UInt8] = Array("{}".utf8)) -> QueuedDelivery {
        QueuedDelivery(
            sequence: sequence, eventId: event, target: "https://receiver.example/hooks?x=1", body: body,
            created: WallClockTime(millisecondsSince1970: 1_764_000_000_000 + UInt64(sequence)))
    }

    @Test func whatIsWrittenIsWhatTheNextRunOfTheNodeOpensInOrder() async throws {
        try await RedisServer.with { redis in
            let first = queue(redis, node: "n:{1}")
            #expect(try await first.open().isEmpty)
            let binary: [UInt8] = [0, 255, 13, 10, 0x7b]
            try await first.write(adding: [delivery(3, "c"), delivery(1, "a", body: binary), delivery(2, "b")], removing: [])
            try await first.write(adding: [delivery(4, "d")], removing: [2])
            await first.close()
            let again = queue(redis, node: "n:{1}")
            let waiting = try await again.open()
            #expect(waiting == [delivery(1, "a", body: binary), delivery(3, "c"), delivery(4, "d")])
            // Another node's queue is its own.
            #expect(try await queue(redis, node: "n:{2}").open().isEmpty)
            await again.close()
        }
    }

    @Test func aDeadNodesQueueIsTakenOverOnceInItsOrderAndKeptByTheTaker() async throws {
        try await RedisServer.with { redis in
            let dead = queue(redis, node: "dead")
            _ = try await dead.open()
            try await dead.write(adding: [delivery(9, "i"), delivery(2, "b"), delivery(5, "e"), delivery(12, "l")], removing: [12])
            await dead.close()
            let (b, c) = (queue(redis, node: "b"), queue(redis, node: "c"))
            _ = try await b.open()
            _ = try await c.open()
            var signals = try #require(b.adoptions).makeAsyncIterator()
            // Both reapers at once: each delivery moves once.
            async let byB = b.takeOver(queueOfNode: "dead")
            async let byC = c.takeOver(queueOfNode: "dead")
            let moved = try await [byB, byC]
            #expect(moved.sorted() == [0, 3], "\(moved)")
            let (taker, other) = moved[0] == 3 ? (b, c) : (c, b)
            if taker === b { #expect(await signals.next() != nil) }
            #expect(try await taker.adopted().map(\.eventId) == ["b", "e", "i"])
            #expect(try await other.adopted().isEmpty)
            #expect(try await taker.takeOver(queueOfNode: "dead") == 0, "nothing is left to take")

            // Kept in two steps, renumbered: each step moves its deliveries off the handed list.
            let handed = try await taker.adopted()
            try await taker.keepAdopted(handed.prefix(1).map { var kept = $0; kept.sequence = 100; return kept })
            #expect(try await taker.adopted().map(\.eventId) == ["e", "i"])
            try await taker.keepAdopted(handed.dropFirst().enumerated().map { var kept = $0.element; kept.sequence = 101 + Int64($0.offset); return kept })
            #expect(try await taker.adopted().isEmpty)
            await taker.close()
            let reopened = queue(redis, node: taker.nodeID)
            #expect(try await reopened.open().map { "\($0.sequence):\($0.eventId)" } == ["100:b", "101:e", "102:i"])
            #expect(try await reopened.open().first?.body == Array("{}".utf8))
            await reopened.close()
            await other.close()

            // A node that died holding what it had taken over hands that on first.
            let (x, y) = (queue(redis, node: "x"), queue(redis, node: "y"))
            _ = try await x.open()
            _ = try await y.open()
            let older = queue(redis, node: "older")
            _ = try await older.open()
            try await older.write(adding: [delivery(1, "old")], removing: [])
            #expect(try await x.takeOver(queueOfNode: "older") == 1)
            try await x.write(adding: [delivery(7, "own")], removing: [])
            #expect(try await y.takeOver(queueOfNode: "x") == 2)
            #expect(try await y.adopted().map(\.eventId) == ["old", "own"])
            #expect(try await y.takeOver(queueOfNode: "y") == 0, "a node does not take over its own queue")
            for queue in [x, y, older] { await queue.close() }
        }
    }

    @Test func storedDeliveriesReadBackAndAnythingElseIsRefused() {
        let stored = delivery(7, "ev", body: [1, 2, 3])
        let bytes = RedisWebhookQueue.encoded(stored)
        #expect(RedisWebhookQueue.decoded(bytes, sequence: 7) == stored)
        for length in 0..<bytes.count { #expect(RedisWebhookQueue.decoded(Array(bytes.prefix(length)), sequence: 7) == nil) }
        #expect(RedisWebhookQueue.decoded(bytes + [0], sequence: 7) == nil)
        #expect(RedisWebhookQueue.decoded(nil, sequence: 7) == nil)
    }
}
