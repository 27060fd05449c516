import Synchronization
import Testing
import SwitchboardRedis
import SwitchboardTestKit
import SwitchboardTransport

/// What a subscriber handed its handler, in order.
final class SubscriberEvents: Sendable {
    private let events = Mutex<[RedisSubscriberEvent]>([])

    func record(_ event: RedisSubscriberEvent) { events.withLock { $0.append(event) } }

    var all: [RedisSubscriberEvent] { events.withLock { $0 } }

    /// The payloads received on `channel`, as text.
    func payloads(on channel: RedisChannel) -> [String] {
        all.compactMap { event in
            guard case .message(let message) = event, message.channel == channel else { return nil }
            return String(decoding: message.payload, as: UTF8.self)
        }
    }

    var restorations: [[RedisChannel]] {
        all.compactMap { event in
            guard case .linkRestored(let gap) = event else { return nil }
            return gap
        }
    }

    var losses: Int {
        all.count { event in
            guard case .linkLost = event else { return false }
            return true
        }
    }
}

/// The subscriber against a real redis-server: delivery, unsubscribing, shard channels, and the
/// gap it reports after its link drops or goes silent.
@Suite(.timeLimit(.minutes(3))) struct RedisSubscriberTests {
    @Test(arguments: [true, false])
    func deliversMessagesOfSubscribedChannelsOnly(resp3: Bool) async throws {
        try await RedisServer.with { server in
            try await withLoopGroup { group in
                let configuration = RedisConfiguration(url: server.url(), preferRESP3: resp3)
                let events = SubscriberEvents()
                let subscriber = try await RedisSubscriber.connect(configuration, group: group, handler: events.record)
                let publisher = try await RedisClient.connect(configuration, group: group)
                let news = RedisChannel("news")
                let sports = RedisChannel("sports")
                let shard = RedisChannel("{app}:user", sharded: true)
                try await subscriber.subscribe([news, sports, shard])
                #expect(try await publisher.send(["PUBLISH", "news", "one"]) == .integer(1))
                _ = try await publisher.send(bytes: [bytes("PUBLISH"), bytes("sports"), [0, 13, 10, 255]])
                #expect(try await publisher.send(["SPUBLISH", "{app}:user", "private"]) == .integer(1))
                #expect(try await publisher.send(["PUBLISH", "weather", "nobody listens"]) == .integer(0))
                #expect(await eventually { events.payloads(on: shard) == ["private"] })
                #expect(events.payloads(on: news) == ["one"])
                #expect(events.all.contains(.message(RedisMessage(channel: sports, payload: [0, 13, 10, 255]))))

                await subscriber.unsubscribe([news])
                _ = try await publisher.send(["PUBLISH", "news", "two"])
                // The positive control: a message published after it on a channel still subscribed.
                _ = try await publisher.send(["PUBLISH", "sports", "after"])
                #expect(await eventually { events.payloads(on: sports).contains("after") })
                #expect(events.payloads(on: news) == ["one"])
                #expect(subscriber.isConnected)
                #expect(events.losses == 0)
                await subscriber.close()
                await publisher.close()
            }
        }
    }

    @Test func resubscribesAfterARestartAndReportsTheGap() async throws {
        try await RedisServer.with { server in
            try await withLoopGroup { group in
                let configuration = RedisConfiguration(
                    url: server.url(), backoff: RedisBackoff(initial: .milliseconds(20), maximum: .milliseconds(200)))
                let events = SubscriberEvents()
                let subscriber = try await RedisSubscriber.connect(configuration, group: group, handler: events.record)
                let publisher = try await RedisClient.connect(configuration, group: group)
                let channels = [RedisChannel("a"), RedisChannel("b"), RedisChannel("s", sharded: true)]
                try await subscriber.subscribe(channels)
                _ = try await publisher.send(["PUBLISH", "a", "before"])
                #expect(await eventually { events.payloads(on: channels[0]) == ["before"] })

                try await server.kill()
                #expect(await eventually { events.losses == 1 })
                #expect(!subscriber.isConnected)
                // Asked for during the outage: refused now, subscribed once the link is back.
                let late = RedisChannel("late")
                await #expect(throws: RedisError.self) { try await subscriber.subscribe([late]) }

                try await server.start()
                #expect(await eventually { events.restorations.count == 1 })
                let gap = try #require(events.restorations.first)
                #expect(Set(gap) == Set(channels + [late]))
                #expect(await eventually { publisher.isConnected })
                #expect(try await publisher.send(["PUBLISH", "a", "after"]) == .integer(1))
                #expect(try await publisher.send(["PUBLISH", "late", "hello"]) == .integer(1))
                #expect(try await publisher.send(["SPUBLISH", "s", "sharded"]) == .integer(1))
                #expect(await eventually { events.payloads(on: channels[2]) == ["sharded"] })
                #expect(events.payloads(on: channels[0]) == ["before", "after"])
                #expect(events.payloads(on: late) == ["hello"])
                await subscriber.close()
                await publisher.close()
            }
        }
    }

    @Test(arguments: [true, false])
    func aSilentLinkIsFoundByItsCheckAndMadeAgain(resp3: Bool) async throws {
        try await RedisServer.with { server in
            try await withLoopGroup { group in
                let configuration = RedisConfiguration(
                    url: server.url(), commandTimeout: .milliseconds(300), connectTimeout: .milliseconds(500),
                    backoff: RedisBackoff(initial: .milliseconds(20), maximum: .milliseconds(100)),
                    preferRESP3: resp3, healthCheckInterval: .milliseconds(100))
                let events = SubscriberEvents()
                let subscriber = try await RedisSubscriber.connect(configuration, group: group, handler: events.record)
                try await subscriber.subscribe([RedisChannel("quiet")])
                // A healthy link answers its checks: several pass without a loss (the frozen server
                // below is the control that a missed answer is noticed in this time).
                try await Task.sleep(for: .milliseconds(800))
                #expect(events.losses == 0)
                // Frozen, the server keeps its sockets open and answers nothing.
                await server.pause()
                let found = await eventually(within: .seconds(5)) { events.losses >= 1 }
                await server.resume()
                #expect(found)
                #expect(await eventually { events.restorations.last == [RedisChannel("quiet")] })
                #expect(subscriber.isConnected)
                await subscriber.close()
            }
        }
    }
}
