import Foundation
import Synchronization
import SwitchboardTestKit
import SwitchboardCore
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTransport
import SwitchboardWire

/// A raw protocol client for presence tests: one logged-in connection, its requests numbered.
final class PresencePeer: Sendable {
    let client: RawClient
    let userId: String
    let accepted: LoginAccepted
    private let ids = Mutex<UInt32>(1)

    private init(client: RawClient, userId: String, accepted: LoginAccepted) {
        self.client = client
        self.userId = userId
        self.accepted = accepted
    }

    /// Connects and logs in; heartbeats are due only every 1,800 s, so a test's clock may move.
    static func login(
        _ userId: String, to url: String, group: EventLoopGroup, appId: String = "test-app",
        presenceTimeout: Int = 300, resume: ResumeTicket? = nil
    ) async throws -> PresencePeer {
        let client = try await RawClient.connect(to: url, group: group)
        client.send(
            .login(
                id: 1,
                Login(
                    appId: appId, userId: userId, token: "", heartbeatInterval: 1800, presenceTimeout: presenceTimeout,
                    resume: resume)))
        guard let accepted = await client.answer(to: 1)?.loginAccepted else {
            throw PresencePeerError.loginFailed(userId)
        }
        return PresencePeer(client: client, userId: userId, accepted: accepted)
    }

    /// Sends the request `make` builds with the next id and waits for its answer.
    func call(_ make: (UInt32) -> ClientFrame) async -> ServerFrame? {
        let id = ids.withLock { id -> UInt32 in
            id += 1
            return id
        }
        client.send(make(id))
        return await client.answer(to: id)
    }

    /// Sends the request and checks it succeeded; returns the answer.
    @discardableResult
    func expectOK(_ make: (UInt32) -> ClientFrame) async throws -> Answer {
        let answer = await call(make)
        guard case .answer(_, let result)? = answer else { throw PresencePeerError.refused("\(String(describing: answer))") }
        return result
    }

    /// The error code the request got (nil when it succeeded or got no answer).
    func errorCode(_ make: (UInt32) -> ClientFrame) async -> RtmErrorCode? {
        await call(make)?.errorCode
    }

    func subscribe(_ channel: String, _ features: RtmSubscribeChannelFeature = [.message, .presence]) async throws {
        try await expectOK { .subscribe(id: $0, channel: channel, features: features) }
    }

    func setState(_ channel: String, _ states: [String: String]) async throws {
        try await expectOK { .setState(id: $0, channel: ChannelAddress(.message, channel), items: states.map { StateItem(key: $0.key, value: $0.value) }) }
    }

    func whoNow(_ channel: String, includeUserId: Bool = true, includeState: Bool = false, page: String = "") async throws -> WhoNowPage {
        let answer = try await expectOK {
            .whoNow(id: $0, channel: ChannelAddress(.message, channel), includeUserId: includeUserId, includeState: includeState, page: page)
        }
        guard case .presence(.whoNow(let result)) = answer else { throw PresencePeerError.refused("\(answer)") }
        return result
    }

    /// The presence events received so far, in order.
    var events: [PresenceDelivery] { client.received.compactMap(\.presenceEvent) }

    /// Waits (bounded, real time) until `count` events match `filter`; returns those that do.
    @discardableResult
    func waitForEvents(
        _ count: Int = 1, timeout: Duration = Patience.standard, where filter: @escaping (PresenceDelivery) -> Bool
    ) async -> [PresenceDelivery] {
        await client.waitFor(timeout: timeout) { client in
            let matching = client.received.compactMap(\.presenceEvent).filter(filter)
            return matching.count >= count ? matching : nil
        } ?? events.filter(filter)
    }

    /// Waits for `count` events of `type`.
    @discardableResult
    func waitFor(_ type: RtmPresenceEventType, count: Int = 1) async -> [PresenceDelivery] {
        await waitForEvents(count) { $0.type == type }
    }

    func close() { client.connection.close() }
}

enum PresencePeerError: Error {
    case loginFailed(String)
    case refused(String)
}

/// A server, an event-loop group for its clients, and the peers logged in to it, ended together.
final class PresenceScene: Sendable {
    let server: SwitchboardServer
    let group: EventLoopGroup
    private let peers = Mutex<[PresencePeer]>([])

    private init(server: SwitchboardServer, group: EventLoopGroup) {
        self.server = server
        self.group = group
    }

    /// Starts a server on `clock` with `limits` and no login deadline.
    static func start(clock: any SwitchboardClock = SystemClock(), limits: Limits = Limits()) async throws -> PresenceScene {
        let server = try await TestServer.start(clock: clock, limits: limits) { $0.loginTimeout = nil }
        return PresenceScene(server: server, group: try EventLoopGroup(threads: 1))
    }

    /// Logs a new peer in.
    func login(
        _ userId: String, appId: String = "test-app", presenceTimeout: Int = 300, resume: ResumeTicket? = nil
    ) async throws -> PresencePeer {
        let peer = try await PresencePeer.login(
            userId, to: server.url, group: group, appId: appId, presenceTimeout: presenceTimeout, resume: resume)
        peers.withLock { $0.append(peer) }
        return peer
    }

    /// Closes every peer, stops the server and the group.
    func end() async {
        for peer in peers.withLock({ $0 }) { peer.close() }
        await server.shutdown()
        group.shutdown()
    }
}
