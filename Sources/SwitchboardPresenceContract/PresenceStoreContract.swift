import Testing
import SwitchboardCore
import SwitchboardPresence

/// What every `PresenceStore` does, whatever keeps presence: members showing and hiding (quiet
/// mode, several sessions of one user), states and their limits, paging in join order,
/// listeners, user-level presence, app isolation, each with the exact answers. Each scenario runs
/// on a new, opened, empty store; the store tests of each kind run them all
/// (`@Test(arguments: PresenceStoreContract.allCases)`).
public enum PresenceStoreContract: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case joinsAndLeavesShowAndHideUsers
    case statesArePerUserWithinTheLimits
    case pagesFollowJoinOrder
    case listenersAreTheMembersThatHearPresence
    case userPresenceFollowsSessions
    case channelsAndAppsNeverMeet

    public var testDescription: String { rawValue }

    /// Runs the scenario on `store` (new, opened and empty).
    public func run(on store: any PresenceStore) async throws {
        switch self {
        case .joinsAndLeavesShowAndHideUsers: try await joinsAndLeaves(store)
        case .statesArePerUserWithinTheLimits: try await states(store)
        case .pagesFollowJoinOrder: try await pages(store)
        case .listenersAreTheMembersThatHearPresence: try await listeners(store)
        case .userPresenceFollowsSessions: try await userPresence(store)
        case .channelsAndAppsNeverMeet: try await isolation(store)
        }
    }

    private static let room = ChannelKey(app: "app", .message, "room")
    private static func caller(_ user: String, _ session: UInt64, app: String = "app") -> Caller {
        Caller(app: app, userId: user, session: SessionID(session))
    }
    private static let start = WallClockTime(millisecondsSince1970: 1_700_000_000_000)

    private static func code(_ body: () async throws -> Void) async -> RtmErrorCode? {
        do {
            try await body()
            return nil
        } catch {
            return (error as? RtmError)?.code
        }
    }

    private static func users(_ store: any PresenceStore, _ channel: ChannelKey) async throws -> [UserID] {
        try await store.members(of: channel, after: 0, limit: 100, budget: .max, withStates: false).users.map(\.userId)
    }

    private func joinsAndLeaves(_ store: any PresenceStore) async throws {
        let room = Self.room
        let alice1 = Self.caller("alice", 1), alice2 = Self.caller("alice", 2), bob = Self.caller("bob", 3)
        #expect(
            try await store.join(alice1, room, features: [.presence])
                == MemberChange(user: "alice", before: nil, after: [.presence], otherVisibleSessions: 0, states: [:], occupancy: 1))
        #expect(
            try await store.join(alice2, room, features: [])
                == MemberChange(user: "alice", before: nil, after: [], otherVisibleSessions: 1, states: [:], occupancy: 1))
        // A quiet member does not show.
        #expect(try await store.join(bob, room, features: [.beQuiet]).occupancy == 1)
        #expect(try await Self.users(store, room) == ["alice"])
        #expect(try await store.visibleChannels(of: bob.user) == [])
        #expect(try await store.state(of: bob.user, in: room) == MemberState(visible: false, states: [:]))
        // It shows once it is no longer quiet, after alice.
        #expect(
            try await store.join(bob, room, features: [.presence])
                == MemberChange(user: "bob", before: [.beQuiet], after: [.presence], otherVisibleSessions: 0, states: [:], occupancy: 2))
        #expect(try await Self.users(store, room) == ["alice", "bob"])
        #expect(try await store.visibleChannels(of: alice1.user) == [room])
        #expect(try await store.occupancy(of: room) == 2)
        // Alice shows while one of her sessions is in.
        #expect(
            try await store.leave(alice1, room)
                == MemberChange(user: "alice", before: [.presence], after: nil, otherVisibleSessions: 1, states: [:], occupancy: 2))
        #expect(try await store.leave(alice1, room) == nil)
        #expect(
            try await store.leave(alice2, room)
                == MemberChange(user: "alice", before: [], after: nil, otherVisibleSessions: 0, states: [:], occupancy: 1))
        #expect(try await Self.users(store, room) == ["bob"])
        #expect(try await store.visibleChannels(of: alice1.user) == [])
        #expect(try await store.state(of: alice1.user, in: room) == nil)
        // Quiet again: hidden, still a member.
        #expect(try await store.join(bob, room, features: [.beQuiet]).occupancy == 0)
        #expect(try await store.visibleChannels(of: bob.user) == [])
        #expect(try await store.leave(bob, room)?.occupancy == 0)
        #expect(try await store.listeners(of: room) == [])
    }

    private func states(_ store: any PresenceStore) async throws {
        let room = Self.room
        let alice = Self.caller("alice", 1), aliceAgain = Self.caller("alice", 2)
        var limits = Limits()
        limits.presence.statesPerUser = 3
        limits.presence.stateMaxBytes = 20
        #expect(
            await Self.code { _ = try await store.setState(of: alice.user, in: room, items: [StateItem(key: "k", value: "v")], limits: limits) }
                == .channelNotSubscribed)
        let stream = ChannelKey(app: "app", .stream, "room")
        #expect(await Self.code { _ = try await store.removeState(of: alice.user, in: stream, keys: []) } == .channelNotJoined)
        _ = try await store.join(alice, room, features: [.beQuiet])
        _ = try await store.join(aliceAgain, room, features: [.presence])
        let items = [StateItem(key: "mood", value: "calm"), StateItem(key: "seat", value: "7")]
        #expect(
            try await store.setState(of: alice.user, in: room, items: items, limits: limits)
                == StateChange(changed: true, states: ["mood": "calm", "seat": "7"]))
        #expect(try await store.setState(of: alice.user, in: room, items: items, limits: limits).changed == false)
        // Past the keys or the bytes: refused, nothing changed.
        let tooMany = [StateItem(key: "a", value: "1"), StateItem(key: "b", value: "2")]
        #expect(await Self.code { _ = try await store.setState(of: alice.user, in: room, items: tooMany, limits: limits) } == .presenceStateCountOverflow)
        let tooBig = [StateItem(key: "mood", value: "a very long mood")]
        #expect(
            await Self.code { _ = try await store.setState(of: alice.user, in: room, items: tooBig, limits: limits) }
                == .presenceStateValueSizeOverflow)
        #expect(try await store.state(of: alice.user, in: room) == MemberState(visible: true, states: ["mood": "calm", "seat": "7"]))
        #expect(
            try await store.members(of: room, after: 0, limit: 10, budget: .max, withStates: true).users
                == [UserState(userId: "alice", states: ["mood": "calm", "seat": "7"])])
        #expect(try await store.removeState(of: alice.user, in: room, keys: ["seat", "none"]) == StateChange(changed: true, states: ["mood": "calm"]))
        #expect(try await store.removeState(of: alice.user, in: room, keys: ["none"]) == StateChange(changed: false, states: ["mood": "calm"]))
        // A session leaving keeps the user's state while another is in; the last one clears it.
        #expect(try await store.leave(aliceAgain, room)?.states == ["mood": "calm"])
        #expect(try await store.state(of: alice.user, in: room) == MemberState(visible: false, states: ["mood": "calm"]))
        #expect(try await store.removeState(of: alice.user, in: room, keys: []) == StateChange(changed: true, states: [:]))
        _ = try await store.setState(of: alice.user, in: room, items: items, limits: limits)
        #expect(try await store.leave(alice, room)?.states == [:])
        _ = try await store.join(alice, room, features: [])
        #expect(try await store.state(of: alice.user, in: room) == MemberState(visible: true, states: [:]))
    }

    private func pages(_ store: any PresenceStore) async throws {
        let room = Self.room
        for number in 1...5 { _ = try await store.join(Self.caller("user\(number)", UInt64(number)), room, features: []) }
        // user2 leaves and comes back: it goes to the end.
        _ = try await store.leave(Self.caller("user2", 2), room)
        _ = try await store.join(Self.caller("user2", 6), room, features: [])
        var seen: [UserID] = []
        var cursor: UInt64 = 0
        var pages = 0
        while true {
            let page = try await store.members(of: room, after: cursor, limit: 2, budget: .max, withStates: false)
            seen += page.users.map(\.userId)
            pages += 1
            guard let next = page.next else { break }
            cursor = next
            // A user joining meanwhile is found at the end; none is repeated.
            if pages == 1 { _ = try await store.join(Self.caller("user7", 7), room, features: []) }
        }
        #expect(seen == ["user1", "user3", "user4", "user5", "user2", "user7"])
        #expect(pages == 3)
        // Exactly as many as asked for, and no more: no next page.
        #expect(try await store.members(of: room, after: 0, limit: 6, budget: .max, withStates: false).next == nil)
        // The budget cuts a page, but never to nothing.
        let cut = try await store.members(of: room, after: 0, limit: 10, budget: 1, withStates: false)
        #expect(cut.users.map(\.userId) == ["user1"] && cut.next != nil)
        #expect(try await store.members(of: room, after: 0, limit: 0, budget: .max, withStates: false) == MemberPage(users: [], next: nil))
        let snapshot = try await store.snapshot(of: room, limit: 3)
        #expect(snapshot.users.map(\.userId) == ["user1", "user3", "user4"] && snapshot.occupancy == 6)
    }

    private func listeners(_ store: any PresenceStore) async throws {
        let room = Self.room
        let alice = Self.caller("alice", 1), bob = Self.caller("bob", 2), carol = Self.caller("carol", 3)
        _ = try await store.join(alice, room, features: [.presence])
        _ = try await store.join(bob, room, features: [.presence, .beQuiet])
        _ = try await store.join(carol, room, features: [])
        #expect(try await store.listeners(of: room).sorted() == [alice.session, bob.session])
        _ = try await store.join(alice, room, features: [])
        _ = try await store.join(carol, room, features: [.presence])
        #expect(try await store.listeners(of: room).sorted() == [bob.session, carol.session])
        _ = try await store.leave(bob, room, timedOut: true)
        #expect(try await store.listeners(of: room) == [carol.session])
    }

    private func userPresence(_ store: any PresenceStore) async throws {
        let alice1 = Self.caller("alice", 1), alice2 = Self.caller("alice", 2)
        let t = { (offset: UInt64) in WallClockTime(millisecondsSince1970: Self.start.millisecondsSince1970 + offset) }
        let now = t(10_000)
        let users = [alice1.user, UserKey("app", "nobody")]
        #expect(
            try await store.presence(of: users, now: now)
                == [UserPresence(userId: "alice", online: false, lastSeen: 0), UserPresence(userId: "nobody", online: false, lastSeen: 0)])
        try await store.record(.opened, of: alice1, at: t(0))
        try await store.record(.opened, of: alice2, at: t(1))
        #expect(try await store.presence(of: users, now: now)[0] == UserPresence(userId: "alice", online: true, lastSeen: now.millisecondsSince1970))
        try await store.record(.suspended, of: alice1, at: t(100))
        try await store.record(.suspended, of: alice2, at: t(200))
        #expect(try await store.presence(of: users, now: now)[0] == UserPresence(userId: "alice", online: true, lastSeen: t(200).millisecondsSince1970))
        try await store.record(.resumed, of: alice2, at: t(300))
        #expect(try await store.presence(of: users, now: now)[0].lastSeen == now.millisecondsSince1970)
        try await store.record(.closed, of: alice2, at: t(400))
        #expect(try await store.presence(of: users, now: now)[0] == UserPresence(userId: "alice", online: true, lastSeen: t(100).millisecondsSince1970))
        try await store.record(.closed, of: alice1, at: t(500))
        try await store.record(.closed, of: alice1, at: t(900))
        #expect(try await store.presence(of: users, now: now)[0] == UserPresence(userId: "alice", online: false, lastSeen: t(500).millisecondsSince1970))
        #expect(try await store.presence(of: [], now: now) == [])
    }

    private func isolation(_ store: any PresenceStore) async throws {
        let room = Self.room, stream = ChannelKey(app: "app", .stream, "room"), other = ChannelKey(app: "other", .message, "room")
        let alice = Self.caller("alice", 1), aliceElsewhere = Self.caller("alice", 2, app: "other")
        _ = try await store.join(alice, room, features: [.presence])
        _ = try await store.join(alice, stream, features: [])
        _ = try await store.join(aliceElsewhere, other, features: [.presence])
        _ = try await store.setState(of: alice.user, in: room, items: [StateItem(key: "k", value: "here")], limits: Limits())
        #expect(try await store.state(of: alice.user, in: stream) == MemberState(visible: true, states: [:]))
        #expect(try await store.state(of: aliceElsewhere.user, in: other) == MemberState(visible: true, states: [:]))
        #expect(try await store.visibleChannels(of: alice.user) == [room, stream])
        #expect(try await store.visibleChannels(of: aliceElsewhere.user) == [other])
        #expect(try await store.listeners(of: other) == [aliceElsewhere.session])
        try await store.record(.opened, of: alice, at: Self.start)
        #expect(try await store.presence(of: [aliceElsewhere.user], now: Self.start)[0].online == false)
    }
}
