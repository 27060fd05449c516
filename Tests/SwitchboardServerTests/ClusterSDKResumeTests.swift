import Foundation
import Synchronization
import Testing
import SwitchboardClient
import SwitchboardCluster
import SwitchboardCore
import SwitchboardRedis
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit

/// The SDK against two cluster nodes composed as `switchboard serve --cluster` composes them: when
/// its node goes away, it moves to the next entry of `accessPointHosts` and resumes its session
/// there, its subscription kept by the cluster.
@Suite(.timeLimit(.minutes(3))) struct ClusterSDKResumeTests {
    func node(_ name: String, on redis: RedisServer) async throws -> SwitchboardServer {
        try await TestServer.start { configuration in
            configuration.cluster = ClusterConfiguration(url: RedisURL(host: "127.0.0.1", port: redis.port), nodeID: name)
        }
    }

    func client(_ userId: String, hosts: [String]) throws -> RtmClientKit {
        let config = RtmClientConfig(appId: "test-app", userId: userId)
        config.presenceTimeout = 30
        config.privateConfig = RtmPrivateConfig()
        config.privateConfig?.accessPointHosts = hosts
        return try RtmClientKit(config, delegate: nil)
    }

    /// Everything a client hears, from `listen(to:)` on.
    final class Heard: Sendable {
        let links = Mutex<[RtmLinkStateEvent]>([])
        let messages = Mutex<[String]>([])
        private let listening = Mutex<Task<Void, Never>?>(nil)

        func listen(to client: RtmClientKit) {
            let events = client.events
            listening.withLock {
                $0 = Task { [self] in
                    for await event in events {
                        switch event {
                        case .linkState(let change): links.withLock { $0.append(change) }
                        case .message(let message): messages.withLock { $0.append(message.message.stringData ?? "") }
                        default: break
                        }
                    }
                }
            }
        }

        func stop() { listening.withLock { $0?.cancel() } }
        var linkChanges: [RtmLinkStateEvent] { links.withLock { $0 } }
        var texts: [String] { messages.withLock { $0 } }
    }

    @Test func theSDKMovesToTheNextNodeAndResumesItsSessionThere() async throws {
        try await RedisServer.with { redis in
            let a = try await node("a", on: redis)
            let b = try await node("b", on: redis)
            let alice = try client("alice", hosts: [a.url, b.url])
            let heard = Heard()
            heard.listen(to: alice)
            #expect(await alice.login("").1 == nil)
            #expect(await alice.subscribe(channelName: "room", option: nil).1 == nil)
            let stream = try alice.createStreamChannel("live")
            #expect(await stream.join(RtmJoinChannelOption()).1 == nil)
            #expect(a.connectionCount == 1)
            let bob = try client("bob", hosts: [b.url])
            #expect(await bob.login("").1 == nil)
            #expect(await bob.publish(channelName: "room", message: "before", option: nil).1 == nil)
            #expect(await eventually { heard.texts == ["before"] })

            // Node a stops (a rolling restart, say): the SDK moves on to node b and resumes there.
            await a.shutdown()
            #expect(
                await eventually {
                    heard.linkChanges.contains { $0.currentState == .connected && $0.operation == .reconnected && $0.isResumed }
                }, "\(heard.linkChanges.map { "\($0.currentState) \($0.operation) resumed \($0.isResumed)" })")
            #expect(b.connectionCount == 2)
            // Its subscription stands on node b: a message of the room reaches it, with no subscribe again.
            #expect(await bob.publish(channelName: "room", message: "after", option: nil).1 == nil)
            #expect(await eventually { heard.texts == ["before", "after"] }, "\(heard.texts)")
            // Its stream channel, which the cluster does not move with a session, is joined again:
            // a topic can be joined there.
            #expect(
                await eventuallyAsync { await stream.joinTopic("t", option: nil).1 == nil },
                "the stream channel was not joined again on node b")
            alice.destroy()
            bob.destroy()
            heard.stop()
            await b.shutdown()
        }
    }
}
