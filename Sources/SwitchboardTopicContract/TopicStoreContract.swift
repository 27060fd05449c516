import Testing
import SwitchboardCore
import SwitchboardTopicRouter

/// What every `TopicStore` does, whatever keeps the topics: joining and leaving stream channels,
/// publishers in join order, subscriptions and the receivers they make, every limit with the
/// reference's code, a replaced session of the same user, app isolation, each with the exact
/// answers. Each scenario runs on a new, opened, empty store; the store tests of each kind run
/// them all (`@Test(arguments: TopicStoreContract.allCases)`).
public enum TopicStoreContract: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case membersJoinAndLeave
    case publishersAreListedInJoinOrder
    case subscriptionsMakeTheReceivers
    case limitsAreCheckedWithTheChange
    case callsOfNonMembersAreRefused
    case aReplacedSessionKeepsTheNewOnesTopics
    case channelsAndAppsNeverMeet

    public var testDescription: String { rawValue }

    /// Runs the scenario on `store` (new, opened and empty).
    public func run(on store: any TopicStore) async throws {
        switch self {
        case .membersJoinAndLeave: try await membersJoinAndLeave(store)
        case .publishersAreListedInJoinOrder: try await publishersInJoinOrder(store)
        case .subscriptionsMakeTheReceivers: try await subscriptions(store)
        case .limitsAreCheckedWithTheChange: try await limits(store)
        case .callsOfNonMembersAreRefused: try await refusals(store)
        case .aReplacedSessionKeepsTheNewOnesTopics: try await replacedSession(store)
        case .channelsAndAppsNeverMeet: try await isolation(store)
        }
    }

    private static let live = ChannelKey(app: "app", .stream, "live")
    private static func caller(_ user: String, _ session: UInt64, app: String = "app") -> Caller {
        Caller(app: app, userId: user, session: SessionID(session))
    }
    private static func member(_ caller: Caller) -> StreamMember { StreamMember(caller: caller, features: [.presence]) }
    private static func info(_ topic: String, _ publishers: (String, String)...) -> TopicInfo {
        TopicInfo(topic: topic, publishers: publishers.map { TopicPublisher(userId: $0.0, meta: $0.1) })
    }

    private static func code(_ body: () async throws -> Void) async -> RtmErrorCode? {
        do {
            try await body()
            return nil
        } catch {
            return (error as? RtmError)?.code
        }
    }

    private static func joinTopic(
        _ store: any TopicStore, _ caller: Caller, _ topic: String, meta: String = "", in channel: ChannelKey = live,
        limits: Limits = Limits()
    ) async throws -> TopicPublisher {
        try await store.joinTopic(
            caller.session, topic, in: channel, options: TopicJoinOptions(meta: meta), limits: limits, operation: "joinTopic")
    }

    private func membersJoinAndLeave(_ store: any TopicStore) async throws {
        let live = Self.live, other = ChannelKey(app: "app", .stream, "alpha")
        let alice = Self.caller("alice", 1), bob = Self.caller("bob", 2)
        #expect(try await store.join(Self.member(alice), to: live, limits: Limits()) == [])
        #expect(await Self.code { _ = try await store.join(Self.member(alice), to: live, limits: Limits()) } == .duplicateOperation)
        _ = try await Self.joinTopic(store, alice, "video", meta: "cam")
        // A joiner finds the topics with publishers.
        #expect(try await store.join(Self.member(bob), to: live, limits: Limits()) == [Self.info("video", ("alice", "cam"))])
        _ = try await store.join(Self.member(alice), to: other, limits: Limits())
        _ = try await Self.joinTopic(store, alice, "audio", in: other)
        // Leaving reports the topics the leaver published in, and removes them.
        #expect(
            try await store.leave(alice.session, from: live)
                == StreamDeparture(channel: live, caller: alice, topics: [Self.info("video", ("alice", "cam"))]))
        #expect(try await store.topics(of: live) == [])
        #expect(try await store.leave(alice.session, from: live) == nil)
        // A session's end leaves every channel, by name.
        _ = try await store.join(Self.member(alice), to: live, limits: Limits())
        let departures = try await store.leaveAll(alice.session)
        #expect(departures.map(\.channel) == [other, live])
        #expect(departures.first?.topics == [Self.info("audio", ("alice", ""))])
        #expect(try await store.leaveAll(alice.session) == [])
        #expect(try await store.topics(of: other) == [])
        // The channel's last member leaving empties it.
        #expect(try await store.leave(bob.session, from: live) == StreamDeparture(channel: live, caller: bob, topics: []))
        #expect(try await store.snapshot(of: live).topics == [])
    }

    private func publishersInJoinOrder(_ store: any TopicStore) async throws {
        let live = Self.live
        let alice = Self.caller("alice", 1), bob = Self.caller("bob", 2), carol = Self.caller("carol", 3)
        for caller in [alice, bob, carol] { _ = try await store.join(Self.member(caller), to: live, limits: Limits()) }
        #expect(try await Self.joinTopic(store, carol, "video", meta: "c") == TopicPublisher(userId: "carol", meta: "c"))
        _ = try await Self.joinTopic(store, alice, "video", meta: "a")
        _ = try await Self.joinTopic(store, bob, "audio")
        _ = try await Self.joinTopic(store, bob, "video")
        let topics = [Self.info("audio", ("bob", "")), Self.info("video", ("carol", "c"), ("alice", "a"), ("bob", ""))]
        #expect(try await store.topics(of: live) == topics)
        #expect(try await store.snapshot(of: live).topics == topics)
        // Without a user list, a subscription takes the current publishers, in join order.
        let answer = try await store.subscribe(alice.session, to: nil, in: "video", of: live, limits: Limits(), operation: "s")
        #expect(answer == TopicSubscription(succeedUsers: ["carol", "alice", "bob"], failedUsers: []))
        #expect(
            try await store.leaveTopic(alice.session, "video", in: live, operation: "leaveTopic") == TopicPublisher(userId: "alice", meta: "a"))
        #expect(try await store.topics(of: live).last == Self.info("video", ("carol", "c"), ("bob", "")))
        // Joining again puts the publisher last.
        _ = try await Self.joinTopic(store, alice, "video", meta: "again")
        #expect(try await store.topics(of: live).last == Self.info("video", ("carol", "c"), ("bob", ""), ("alice", "again")))
    }

    private func subscriptions(_ store: any TopicStore) async throws {
        let live = Self.live
        let alice = Self.caller("alice", 1), bob = Self.caller("bob", 2), carol = Self.caller("carol", 3)
        for caller in [alice, bob, carol] { _ = try await store.join(Self.member(caller), to: live, limits: Limits()) }
        _ = try await Self.joinTopic(store, alice, "video")
        let (publication, none) = try await store.publication(of: alice.session, in: "video", of: live, operation: "p")
        #expect(publication == TopicPublication(userId: "alice", options: TopicJoinOptions()))
        #expect(none == [])
        // A named user need not publish yet; a name that is no user id fails.
        let named = try await store.subscribe(carol.session, to: ["alice", "dave", "bad\u{1}"], in: "video", of: live, limits: Limits(), operation: "s")
        #expect(named == TopicSubscription(succeedUsers: ["alice", "dave"], failedUsers: ["bad\u{1}"]))
        _ = try await store.subscribe(bob.session, to: nil, in: "video", of: live, limits: Limits(), operation: "s")
        #expect(try await store.publication(of: alice.session, in: "video", of: live, operation: "p").receivers == [bob.session, carol.session])
        #expect(try await store.receivers(of: "alice", in: "video", of: live) == [bob.session, carol.session])
        #expect(try await store.receivers(of: "dave", in: "video", of: live) == [carol.session])
        // Subscribing again to the same publisher is a success that changes nothing.
        #expect(
            try await store.subscribe(bob.session, to: ["alice"], in: "video", of: live, limits: Limits(), operation: "s")
                == TopicSubscription(succeedUsers: ["alice"], failedUsers: []))
        try await store.unsubscribe(carol.session, from: ["alice"], in: "video", of: live, operation: "u")
        #expect(try await store.receivers(of: "alice", in: "video", of: live) == [bob.session])
        try await store.unsubscribe(carol.session, from: nil, in: "video", of: live, operation: "u")
        #expect(try await store.receivers(of: "dave", in: "video", of: live) == [])
        #expect(await Self.code { try await store.unsubscribe(carol.session, from: nil, in: "video", of: live, operation: "u") } == .channelTopicNotSubscribed)
        // A subscriber that leaves receives nothing more.
        _ = try await store.leave(bob.session, from: live)
        #expect(try await store.receivers(of: "alice", in: "video", of: live) == [])
    }

    private func limits(_ store: any TopicStore) async throws {
        var limits = Limits()
        limits.streams.usersPerChannel = 2
        limits.streams.joinedChannelsPerClient = 2
        limits.streams.joinedTopicsPerChannel = 2
        limits.streams.subscribedTopicsPerChannel = 1
        limits.streams.publishersPerTopicSubscription = 2
        let live = Self.live
        let alice = Self.caller("alice", 1), bob = Self.caller("bob", 2), carol = Self.caller("carol", 3)
        _ = try await store.join(Self.member(alice), to: live, limits: limits)
        _ = try await store.join(Self.member(bob), to: live, limits: limits)
        #expect(await Self.code { _ = try await store.join(Self.member(carol), to: live, limits: limits) } == .channelJoinFailed)
        // A refused join changes nothing: carol is no member.
        #expect(try await store.leave(carol.session, from: live) == nil)
        _ = try await store.join(Self.member(alice), to: ChannelKey(app: "app", .stream, "second"), limits: limits)
        #expect(
            await Self.code { _ = try await store.join(Self.member(alice), to: ChannelKey(app: "app", .stream, "third"), limits: limits) }
                == .channelInstanceExceedLimitation)
        _ = try await Self.joinTopic(store, alice, "a", limits: limits)
        #expect(await Self.code { _ = try await Self.joinTopic(store, alice, "a", limits: limits) } == .duplicateOperation)
        _ = try await Self.joinTopic(store, alice, "b", limits: limits)
        #expect(await Self.code { _ = try await Self.joinTopic(store, alice, "c", limits: limits) } == .channelJoinTopicFailed)
        #expect(try await store.topics(of: live).map(\.topic) == ["a", "b"])
        // Publishers per subscription: a list past the room is refused whole; without a list the
        // publishers past the room fail.
        #expect(
            await Self.code {
                _ = try await store.subscribe(bob.session, to: ["u1", "u2", "u3"], in: "a", of: live, limits: limits, operation: "s")
            } == .channelExceedTopicUserLimitation)
        _ = try await store.subscribe(bob.session, to: ["u1"], in: "a", of: live, limits: limits, operation: "s")
        _ = try await Self.joinTopic(store, bob, "a", limits: limits)
        let answer = try await store.subscribe(bob.session, to: nil, in: "a", of: live, limits: limits, operation: "s")
        #expect(answer == TopicSubscription(succeedUsers: ["alice"], failedUsers: ["bob"]))
        #expect(try await store.receivers(of: "u1", in: "a", of: live) == [bob.session])
        // Subscribed topics per channel.
        #expect(
            await Self.code { _ = try await store.subscribe(bob.session, to: ["alice"], in: "b", of: live, limits: limits, operation: "s") }
                == .channelExceedTopicLimitation)
        // A leave makes room.
        _ = try await store.leave(alice.session, from: live)
        _ = try await store.join(Self.member(carol), to: live, limits: limits)
    }

    private func refusals(_ store: any TopicStore) async throws {
        let live = Self.live
        let alice = Self.caller("alice", 1)
        #expect(await Self.code { _ = try await Self.joinTopic(store, alice, "video") } == .channelNotJoined)
        #expect(await Self.code { _ = try await store.leaveTopic(alice.session, "video", in: live, operation: "l") } == .channelNotJoined)
        #expect(await Self.code { _ = try await store.publication(of: alice.session, in: "video", of: live, operation: "p") } == .channelNotJoined)
        #expect(await Self.code { _ = try await store.subscribe(alice.session, to: nil, in: "video", of: live, limits: Limits(), operation: "s") } == .channelNotJoined)
        #expect(await Self.code { try await store.unsubscribe(alice.session, from: nil, in: "video", of: live, operation: "u") } == .channelNotJoined)
        _ = try await store.join(Self.member(alice), to: live, limits: Limits())
        #expect(await Self.code { _ = try await store.leaveTopic(alice.session, "video", in: live, operation: "l") } == .channelTopicNotJoined)
        #expect(await Self.code { _ = try await store.publication(of: alice.session, in: "video", of: live, operation: "p") } == .channelTopicNotJoined)
        #expect(await Self.code { try await store.unsubscribe(alice.session, from: nil, in: "video", of: live, operation: "u") } == .channelTopicNotSubscribed)
        // The operation passed in is the one errors name.
        do {
            _ = try await store.leaveTopic(alice.session, "video", in: live, operation: "leaveTopic")
        } catch {
            #expect(error.operation == "leaveTopic")
        }
    }

    private func replacedSession(_ store: any TopicStore) async throws {
        let live = Self.live
        let old = Self.caller("alice", 1), new = Self.caller("alice", 7), bob = Self.caller("bob", 2)
        for caller in [old, new, bob] { _ = try await store.join(Self.member(caller), to: live, limits: Limits()) }
        _ = try await Self.joinTopic(store, old, "video")
        _ = try await Self.joinTopic(store, new, "video", meta: "new")
        let departures = try await store.leaveAll(old.session)
        #expect(departures == [StreamDeparture(channel: live, caller: old, topics: [Self.info("video", ("alice", ""))])])
        #expect(try await store.topics(of: live) == [Self.info("video", ("alice", "new"))])
        _ = try await store.subscribe(bob.session, to: nil, in: "video", of: live, limits: Limits(), operation: "s")
        #expect(try await store.publication(of: new.session, in: "video", of: live, operation: "p").receivers == [bob.session])
    }

    private func isolation(_ store: any TopicStore) async throws {
        let here = ChannelKey(app: "app", .stream, "live"), there = ChannelKey(app: "other", .stream, "live")
        let alice = Self.caller("alice", 1), otherAlice = Self.caller("alice", 2, app: "other")
        _ = try await store.join(Self.member(alice), to: here, limits: Limits())
        _ = try await store.join(Self.member(otherAlice), to: there, limits: Limits())
        _ = try await Self.joinTopic(store, alice, "video", meta: "here")
        #expect(try await store.topics(of: there) == [])
        #expect(await Self.code { _ = try await store.publication(of: otherAlice.session, in: "video", of: there, operation: "p") } == .channelTopicNotJoined)
        _ = try await store.subscribe(otherAlice.session, to: ["alice"], in: "video", of: there, limits: Limits(), operation: "s")
        #expect(try await store.receivers(of: "alice", in: "video", of: here) == [])
        #expect(try await store.receivers(of: "alice", in: "video", of: there) == [otherAlice.session])
        _ = try await store.leaveAll(alice.session)
        #expect(try await store.topics(of: here) == [])
        #expect(try await store.receivers(of: "alice", in: "video", of: there) == [otherAlice.session])
    }
}
