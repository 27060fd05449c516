import Testing
import SwitchboardCore
@testable import SwitchboardTopicRouter

/// The in-memory store's table, without the store and the router around it.
@Suite(.timeLimit(.minutes(2))) struct TopicTableTests {
    let channel = ChannelKey(app: "app", .stream, "live")
    let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    let bob = Caller(app: "app", userId: "bob", session: SessionID(2))
    let carol = Caller(app: "app", userId: "carol", session: SessionID(3))

    func store(_ callers: Caller...) throws -> TopicTable {
        var store = TopicTable()
        for caller in callers { _ = try store.join(StreamMember(caller: caller, features: [.presence]), to: channel, limits: Limits()) }
        return store
    }

    @Test func receiversFollowEverySubscriptionChange() throws {
        var store = try store(alice, bob, carol)
        _ = try store.joinTopic(alice.session, "video", in: channel, options: TopicJoinOptions(), limits: Limits(), operation: "t")
        #expect(store.receivers(of: "alice", in: "video", of: channel).isEmpty)
        _ = try store.subscribe(carol.session, to: ["alice"], in: "video", of: channel, limits: Limits(), operation: "t")
        let got22 = store.receivers(of: "alice", in: "video", of: channel)
        #expect(got22 == [carol.session])
        _ = try store.subscribe(bob.session, to: nil, in: "video", of: channel, limits: Limits(), operation: "t")
        let got25 = store.receivers(of: "alice", in: "video", of: channel)
        #expect(got25 == [bob.session, carol.session])
        try store.unsubscribe(carol.session, from: ["alice"], in: "video", of: channel, operation: "t")
        let got28 = store.receivers(of: "alice", in: "video", of: channel)
        #expect(got28 == [bob.session])
        _ = store.leave(bob.session, from: channel)
        #expect(store.receivers(of: "alice", in: "video", of: channel).isEmpty)
    }

    @Test func leavingRemovesEveryTraceAndReportsThePublishedTopics() throws {
        var store = try store(alice, bob)
        for topic in ["b", "a"] {
            _ = try store.joinTopic(alice.session, topic, in: channel, options: TopicJoinOptions(meta: topic), limits: Limits(), operation: "t")
        }
        _ = try store.subscribe(alice.session, to: nil, in: "a", of: channel, limits: Limits(), operation: "t")
        #expect(store.topics(of: channel).map(\.topic) == ["a", "b"])
        let departure = store.leave(alice.session, from: channel)
        #expect(departure?.topics == [
            TopicInfo(topic: "a", publishers: [TopicPublisher(userId: "alice", meta: "a")]),
            TopicInfo(topic: "b", publishers: [TopicPublisher(userId: "alice", meta: "b")]),
        ])
        #expect(store.topics(of: channel).isEmpty)
        let got47 = store.members(of: channel)
        #expect(got47 == [bob.session])
        let got49 = store.leave(alice.session, from: channel)
        #expect(got49 == nil)
        _ = store.leave(bob.session, from: channel)
        #expect(store.members(of: channel).isEmpty)
        #expect(!store.isMember(bob.session, of: channel))
    }

    @Test func snapshotsListPublishersInJoinOrder() throws {
        var store = try store(alice, bob, carol)
        for caller in [carol, alice, bob] {
            _ = try store.joinTopic(caller.session, "video", in: channel, options: TopicJoinOptions(), limits: Limits(), operation: "t")
        }
        #expect(store.topics(of: channel).first?.publishers.map(\.userId) == ["carol", "alice", "bob"])
        let answer = try store.subscribe(alice.session, to: nil, in: "video", of: channel, limits: Limits(), operation: "t")
        #expect(answer.succeedUsers == ["carol", "alice", "bob"])
    }

    @Test func aReplacedSessionOfTheSameUserDoesNotRemoveTheNewOnesTopic() throws {
        let alice2 = Caller(app: "app", userId: "alice", session: SessionID(7))
        var store = try store(alice, alice2)
        _ = try store.joinTopic(alice.session, "video", in: channel, options: TopicJoinOptions(), limits: Limits(), operation: "t")
        _ = try store.joinTopic(alice2.session, "video", in: channel, options: TopicJoinOptions(meta: "new"), limits: Limits(), operation: "t")
        _ = store.leaveAll(alice.session)
        #expect(store.topics(of: channel) == [TopicInfo(topic: "video", publishers: [TopicPublisher(userId: "alice", meta: "new")])])
    }

    @Test func idleRateWindowsAreForgotten() {
        var rates = TopicRateWindows(limit: 2)
        let got77 = rates.take("a", in: channel, now: .zero)
        #expect(got77)
        let got79 = rates.take("a", in: channel, now: .milliseconds(10))
        #expect(got79)
        let got81 = rates.take("a", in: channel, now: .milliseconds(20))
        #expect(!got81)
        let got83 = rates.take("b", in: channel, now: .milliseconds(500))
        #expect(got83)
        rates.dropIdle(now: .milliseconds(1_200))
        #expect(rates.count == 1)
        rates.dropIdle(now: .milliseconds(1_500))
        #expect(rates.count == 0)
        #expect(TopicRateWindows(limit: nil).count == 0)
    }
}
