import Testing
import SwitchboardCluster
import SwitchboardCore
import SwitchboardRedis
import SwitchboardTestKit

/// Nodes in one process on a real redis-server: an app's concurrent users are counted across the
/// cluster (`sb:oa:{app}`, changed in the online-set scripts), so the limit holds whichever nodes
/// the users log in on, a user online on two nodes counts once, and logouts and a dead node's
/// reaping give places back.
@Suite(.timeLimit(.minutes(3))) struct ClusterUserLimitTests {
    /// Limits with room for `users` concurrent users per app.
    func limits(_ users: Int) -> Limits {
        var limits = Limits()
        limits.sessions.concurrentUsers = users
        return limits
    }

    /// What a login got.
    enum Outcome: Equatable {
        case admitted(Caller)
        case refused(RtmErrorCode)

        func get() throws -> Caller {
            guard case .admitted(let caller) = self else { throw Refused(outcome: self) }
            return caller
        }
        var admitted: Bool { if case .admitted = self { true } else { false } }
    }
    struct Refused: Error { let outcome: Outcome }

    /// Logs `user` of `app` in on `node`.
    func logIn(_ user: String, app: AppID = "app", on node: ClusterNode) async -> Outcome {
        do {
            return .admitted(try await node.harness.bus.request(Login(appId: app, userId: user, token: "")).caller)
        } catch {
            return .refused(error.code)
        }
    }

    /// Logs x in on `a` and y on `b` at once, in `app`.
    func race(_ app: AppID, on a: ClusterNode, _ b: ClusterNode) async -> [Outcome] {
        async let first = logIn("x", app: app, on: a)
        async let second = logIn("y", app: app, on: b)
        return await [first, second]
    }

    func appUsers(_ app: AppID, _ client: RedisClient) async throws -> Set<String> {
        Set(try await client.send(["SMEMBERS", "sb:oa:{\(app)}"]).elements?.compactMap(\.string) ?? [])
    }

    func online(_ user: String, _ client: RedisClient) async throws -> Set<String> {
        Set(try await client.send(["SMEMBERS", "sb:ou:{app:\(user)}"]).elements?.compactMap(\.string) ?? [])
    }

    @Test func twoLoginsRacingForTheLastPlaceOnTwoNodesLetExactlyOneIn() async throws {
        try await RedisServer.with { redis in
            let nodes = try await ClusterNode.start(["a", "b"], on: redis, limits: limits(1))
            let (a, b) = (nodes[0], nodes[1])
            try await redis.withClient { client throws in
                for round in 0..<10 {
                    let app = "race\(round)"
                    let outcomes = await race(app, on: a, b)
                    let admitted = outcomes.filter(\.admitted).count
                    let refused = outcomes.filter { $0 == .refused(.loginNoServerResources) }.count
                    #expect(admitted == 1 && refused == 1, "round \(round): \(outcomes)")
                    #expect(try await appUsers(app, client).count == 1)
                }
            }
            for node in nodes { await node.stop() }
        }
    }

    @Test func aUserOnlineOnAnotherNodeCountsOnceAndALogoutGivesThePlaceBack() async throws {
        try await RedisServer.with { redis in
            let nodes = try await ClusterNode.start(["a", "b"], on: redis, limits: limits(2))
            let (a, b) = (nodes[0], nodes[1])
            try await redis.withClient { client in
                _ = try await logIn("alice", on: a).get()
                let bob = try await logIn("bob", on: b).get()
                // Two users online, one on each node: a third is refused on either, though each
                // node holds one only.
                #expect(await logIn("carol", on: a) == .refused(.loginNoServerResources))
                #expect(await logIn("carol", on: b) == .refused(.loginNoServerResources))
                #expect(try await online("carol", client).isEmpty)
                // Alice logging in again on b is no new user: she gets in (her session on a ends).
                _ = try await logIn("alice", on: b).get()
                #expect(await eventuallyAsync { try await online("alice", client) == ["b"] })
                #expect(try await appUsers("app", client) == ["alice", "bob"])
                #expect(await logIn("carol", on: a) == .refused(.loginNoServerResources))
                // Bob logs out: his place is carol's, on the other node.
                _ = try await b.harness.bus.request(Logout(caller: bob))
                _ = try await logIn("carol", on: a).get()
                #expect(try await appUsers("app", client) == ["alice", "carol"])
                // Every node counts the app's users across the cluster (the server API's info).
                for node in nodes { #expect(try await node.harness.bus.request(CountUsersAcrossNodes(app: "app")) == 2) }
            }
            for node in nodes { await node.stop() }
        }
    }

    @Test func aReapedNodeGivesItsUsersPlacesBack() async throws {
        try await RedisServer.with { redis in
            let nodes = try await ClusterNode.start(["a", "b"], on: redis, limits: limits(1))
            let (a, b) = (nodes[0], nodes[1])
            try await redis.withClient { client in
                _ = try await logIn("alice", on: a).get()
                #expect(await logIn("bob", on: b) == .refused(.loginNoServerResources))
                for _ in 0..<2 {
                    for node in nodes { node.harness.clock.advance(by: .seconds(1)) }
                    try await Task.sleep(for: .milliseconds(20))
                }
                // Node a dies without ending alice's session; node b reaps it once its record expired.
                await a.stop()
                #expect(await logIn("bob", on: b) == .refused(.loginNoServerResources))
                for _ in 0..<5 {
                    b.harness.clock.advance(by: .seconds(1))
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(await eventuallyAsync { try await appUsers("app", client).isEmpty })
                _ = try await logIn("bob", on: b).get()
                #expect(try await appUsers("app", client) == ["bob"])
            }
            await b.stop()
        }
    }
}
