import Testing
import SwitchboardCluster
import SwitchboardCore
import SwitchboardRedis
import SwitchboardServer
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardTesting
import SwitchboardWebhooks

/// Two cluster nodes with webhooks on a real redis-server, composed as `switchboard serve
/// --cluster` composes them: a user's `user.online` and `user.offline` follow the cluster's online
/// state (sent once, by the node of the first login and of the last end), and the node that reaps
/// a dead node sends its users' `user.offline`, and the node that ends each of its sessions no
/// node took over sends what that session's end would have.
@Suite(.timeLimit(.minutes(3))) struct ClusterWebhookEventsTests {
    typealias Receiver = ClusterWebhookNodes.Receiver

    /// The bodies of both receivers that mention `user`'s online state, as `type` (and reason).
    func userEvents(_ user: String, _ receivers: [Receiver]) -> [String] {
        receivers.flatMap(\.bodies).filter { $0.contains("\"user\":\"\(user)\"") && $0.contains("\"type\":\"user.") }.map { body in
            let type = body.contains("user.online") ? "online" : "offline"
            let reason = body.split(separator: "\"reason\":\"").dropFirst().first?.split(separator: "\"").first.map { " \($0)" } ?? ""
            return type + reason
        }
    }

    /// The event types of `receiver`'s bodies, in order.
    func types(_ receiver: Receiver) -> [String] {
        types(of: receiver.bodies)
    }

    func types(of bodies: [String]) -> [String] {
        bodies.compactMap { $0.split(separator: "\"type\":\"").dropFirst().first?.split(separator: "\"").first.map(String.init) }
    }

    /// `receiver`'s bodies but those of events `other` received already: a delivery taken over
    /// from a dead node's queue may be one its node had made and not yet struck off, sent again
    /// with its id (at least once; docs/WEBHOOKS.md), which a receiver deduplicates.
    func bodies(of receiver: Receiver, besides other: Receiver) -> [String] {
        let seen = Set(other.bodies.compactMap(eventId))
        return receiver.bodies.filter { body in eventId(body).map { !seen.contains($0) } ?? true }
    }

    func eventId(_ body: String) -> String? {
        body.split(separator: "\"id\":\"").dropFirst().first?.split(separator: "\"").first.map(String.init)
    }

    /// The nodes Redis lists `user` online on (`sb:ou:{app:user}`).
    func onlineNodes(of user: String, on redis: RedisServer) async throws -> Set<String> {
        let group = try EventLoopGroup(threads: 1)
        let client = try await RedisClient.connect(RedisURL(host: "127.0.0.1", port: redis.port), group: group)
        let members = try? await client.send(["SMEMBERS", "sb:ou:{app:\(user)}"]).elements?.compactMap(\.string)
        await client.close()
        try await BlockingWork.run { group.shutdown() }
        return Set(members ?? [])
    }

    @Test func aUserOnTwoNodesComesOnlineAndGoesOfflineOnceForTheCluster() async throws {
        try await RedisServer.with { redis in
            let (ra, rb) = (Receiver(up: true), Receiver(up: true))
            let a = try await ClusterWebhookNodes.node("a", on: redis, receiver: ra)
            let b = try await ClusterWebhookNodes.node("b", on: redis, receiver: rb)
            // Alice logs in on a, then on b (her session on a ends, replaced): she stayed online
            // throughout, so the cluster tells of her coming online once, from a.
            _ = try await a.bus.request(Login(appId: "app", userId: "alice", token: ""))
            let alice = try await b.bus.request(Login(appId: "app", userId: "alice", token: "")).caller
            #expect(await eventually { userEvents("alice", [ra, rb]) == ["online"] })
            // Her session on a is gone, and node a is off her online set (it takes itself off a
            // moment after the session ends: her logout on b before that would race it, and the
            // last of the two would tell her offline, with its own reason); only her logout on b
            // makes her offline, once.
            #expect(await eventuallyAsync { try await a.bus.request(ListUserSessions(caller: .server(app: "app", userId: "alice"), userId: "alice")).isEmpty })
            #expect(await eventuallyAsync { try await onlineNodes(of: "alice", on: redis) == ["b"] })
            _ = try await b.bus.request(Logout(caller: alice))
            #expect(await eventually { userEvents("alice", [ra, rb]) == ["online", "offline logout"] })
            try await Task.sleep(for: .milliseconds(300))
            #expect(userEvents("alice", [ra, rb]) == ["online", "offline logout"], "\(ra.bodies) \(rb.bodies)")
            #expect(types(ra).filter { $0.hasPrefix("user.") } == ["user.online"])
            #expect(types(rb).filter { $0.hasPrefix("user.") } == ["user.offline"])
            await a.shutdown()
            await b.shutdown()
        }
    }

    @Test func theNodeThatReapsADeadNodeSendsItsSessionsTimeoutsMetadataChangesAndUsersOffline() async throws {
        try await RedisServer.with { redis in
            let (ra, rb) = (Receiver(up: true), Receiver(up: true))
            let a = try await ClusterWebhookNodes.node("a", on: redis, receiver: ra)
            let b = try await ClusterWebhookNodes.node("b", on: redis, receiver: rb)
            // Bob on a (a presence timeout of 5 s) is in the room with a session-bound item in its metadata.
            let bob = try await a.bus.request(Login(appId: "app", userId: "bob", token: "", presenceTimeout: 5)).caller
            _ = try await a.bus.request(Subscribe(caller: bob, channelName: "room", features: [.message, .metadata, .presence]))
            let items = [MetadataItem(key: "seat", value: "3", lease: .session), MetadataItem(key: "name", value: "x")]
            _ = try await a.bus.request(SetChannelMetadata(caller: bob, channelType: .message, channelName: "room", data: Metadata(items: items)))
            #expect(
                await eventually { types(ra) == ["user.online", "channel.occupied", "channel.joined", "metadata.changed"] }, "\(ra.bodies)")
            // His presence in the room is in Redis (node a's presence module writes it a moment
            // after the subscribe's answer; a node stopped before that never wrote it).
            let server = Caller.server(app: "app", userId: "server")
            #expect(
                await eventuallyAsync {
                    try await b.bus.request(WhoNow(caller: server, channel: ChannelAddress(.message, "room"))).users.map(\.userId) == ["bob"]
                })
            // Node a dies with bob's session; node b reaps it within seconds (a loaded machine
            // starves the beats too): bob is online nowhere. His session waits 5 s from a's last
            // beat for a take-over; none comes, and the node that ends it sends what its end on a
            // would have (the metadata store's step before the presence store's).
            await a.shutdown()
            let expected = ["user.offline", "metadata.changed", "channel.timeout", "channel.vacated"]
            #expect(await eventually(within: .seconds(60)) { types(of: self.bodies(of: rb, besides: ra)) == expected }, "\(rb.bodies)")
            let bodies = self.bodies(of: rb, besides: ra)
            #expect(bodies.count == 4)
            if bodies.count == 4 {
                #expect(bodies[0].contains("\"user\":\"bob\"") && bodies[0].contains("\"reason\":\"timeout\""), "\(bodies[0])")
                #expect(bodies[1].contains("\"itemCount\":1") && bodies[1].contains("\"author\":\"\""), "\(bodies[1])")
                #expect(bodies[2].contains("\"channel\":\"room\"") && bodies[2].contains("\"user\":\"bob\""), "\(bodies[2])")
                #expect(bodies[3].contains("\"channel\":\"room\""), "\(bodies[3])")
            }
            // Sent once: nothing more comes on later beats.
            try await Task.sleep(for: .seconds(2))
            #expect(types(of: self.bodies(of: rb, besides: ra)) == expected)
            await b.shutdown()
        }
    }
}
