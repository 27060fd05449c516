import Testing
import SwitchboardCore
import SwitchboardTestKit

/// `ChannelRoster` and `UserSessions`, checked step by step against plain dictionaries over
/// seeded random joins, feature changes, leaves (before and after a session's end) and ends.
@Suite(.timeLimit(.minutes(2))) struct ChannelRosterModelTests {
    /// The plain model: features by (session, channel), and the version each member's features
    /// had before and since its last change.
    struct Model {
        struct Member { var features: ChannelFeatures; var previous: ChannelFeatures; var since: UInt64 }
        var members: [ChannelKey: [SessionID: Member]] = [:]
        var version: UInt64 = 0

        func channels(of session: SessionID) -> [ChannelKey] {
            members.filter { $0.value[session] != nil }.map(\.key)
                .sorted { ($0.type.rawValue, $0.name, $0.app) < ($1.type.rawValue, $1.name, $1.app) }
        }
        func counts(in app: AppID?) -> [RtmChannelType: MembershipCount] {
            var counts: [RtmChannelType: MembershipCount] = [:]
            for (channel, members) in self.members where app == nil || channel.app == app {
                counts[channel.type, default: MembershipCount()].channels += 1
                counts[channel.type, default: MembershipCount()].members += members.count
            }
            return counts
        }
        func listeners(of channel: ChannelKey, hearing feature: ChannelFeatures, asOf: UInt64? = nil) -> [SessionID] {
            (members[channel] ?? [:]).compactMap { session, member in
                let features = asOf.map { member.since <= $0 ? member.features : member.previous } ?? member.features
                return features.isSuperset(of: feature) ? session : nil
            }.sorted()
        }
    }

    static let apps: [AppID] = ["app", "other"]
    static let features: [ChannelFeatures] = [
        [], [.presence], [.message], [.message, .lock], [.metadata, .beQuiet], [.presence, .metadata, .message, .lock],
    ]

    /// Eight seeds one after another in one test, so the run holds at most one of the executor's
    /// threads and the in-process servers of other tests keep the rest.
    @Test func randomChangesMatchAModel() async {
        for seed in 1...8 as ClosedRange<UInt64> { await randomChangesMatchAModel(seed: seed) }
    }

    func randomChangesMatchAModel(seed: UInt64) async {
        var random = SeededGenerator(seed: seed)
        func next(_ bound: Int) -> Int { random.next(below: bound) }
        let channels = Self.apps.flatMap { app in
            ["a", "b", "c"].flatMap { name in [ChannelKey(app: app, .message, name), ChannelKey(app: app, .stream, name)] }
        }
        func caller(_ session: Int) -> Caller {
            Caller(app: Self.apps[session % 2], userId: "user\(session % 5)", session: SessionID(UInt64(session)))
        }
        var roster = ChannelRoster()
        var model = Model()
        var users = UserSessions()
        var online: [UserKey: Set<SessionID>] = [:]
        var nextSession = 1
        var live: [Int] = []
        var ended: [Int] = []
        var failure: String?
        func check(_ holds: Bool, _ what: String) { if !holds && failure == nil { failure = what } }
        for step in 0..<4_000 {
            await SharedExecutor.yield(atStep: step, every: 100)
            if live.isEmpty || next(20) == 0 {
                live.append(nextSession)
                let first = users.open(caller(nextSession))
                check(first == (online[caller(nextSession).user] == nil), "a user's first session")
                online[caller(nextSession).user, default: []].insert(caller(nextSession).session)
                nextSession += 1
            }
            let session = next(10) == 0 && !ended.isEmpty ? ended[next(ended.count)] : live[next(live.count)]
            let member = caller(session)
            // Mostly a channel of the member's app; now and then another app's of the same name.
            let sameApp = channels.filter { $0.app == member.app }
            let channel = next(8) == 0 ? channels[next(channels.count)] : sameApp[next(sameApp.count)]
            switch next(10) {
            case 0..<5:
                let features = Self.features[next(Self.features.count)]
                let before = model.members[channel]?[member.session]?.features
                let change = roster.join(member, channel, features: features)
                if before == features {
                    check(change == nil, "a join with the same features")
                } else {
                    model.version += 1
                    model.members[channel, default: [:]][member.session] = .init(
                        features: features, previous: before ?? [], since: model.version)
                    check(change == MembershipChange(member: member, channel: channel, before: before, after: features, version: model.version), "join")
                }
            case 5..<8:
                let before = model.members[channel]?[member.session]?.features
                let change = roster.leave(member, channel)
                if let before {
                    model.version += 1
                    model.members[channel]?[member.session] = nil
                    if model.members[channel]?.isEmpty == true { model.members[channel] = nil }
                    check(change == MembershipChange(member: member, channel: channel, before: before, after: nil, reason: .left, version: model.version), "leave")
                } else {
                    check(change == nil, "a leave of a non-member")
                }
            case 8:
                let expected = model.channels(of: member.session)
                let leaves = roster.end(member, reason: .timedOut)
                check(leaves.map(\.channel) == expected, "the channels an end leaves")
                check(!leaves.contains(where: { $0.after != nil || $0.reason != .sessionClosed(.timedOut) }), "an end's leaves")
                for channel in expected {
                    model.version += 1
                    model.members[channel]?[member.session] = nil
                    if model.members[channel]?.isEmpty == true { model.members[channel] = nil }
                }
                if let index = live.firstIndex(of: session) {
                    live.remove(at: index)
                    ended.append(session)
                    let last = users.close(member)
                    online[member.user]?.remove(member.session)
                    if online[member.user]?.isEmpty == true { online[member.user] = nil }
                    check(last == (online[member.user] == nil), "a user's last session")
                }
            default:
                let feature = [ChannelFeatures.presence, .message, .lock, .metadata][next(4)]
                let asOf = UInt64(next(Int(model.version) + 1))
                check(roster.listeners(of: channel, hearing: feature) == model.listeners(of: channel, hearing: feature), "listeners")
                check(roster.listeners(of: channel, hearing: feature, asOf: asOf) == model.listeners(of: channel, hearing: feature, asOf: asOf), "listeners as of a version")
            }
            check(roster.version == model.version, "version")
            check(roster.channels(of: member.session) == model.channels(of: member.session), "channels of a session")
            check(roster.features(of: member.session, in: channel) == model.members[channel]?[member.session]?.features, "features")
            check(roster.counts(in: member.app) == model.counts(in: member.app), "the counts of an app")
            check(roster.counts(in: nil) == model.counts(in: nil), "the counts of every app")
            check(roster.isEmpty(channel) == (model.members[channel] == nil), "empty")
            check(roster.memberCount(of: channel) == (model.members[channel]?.count ?? 0), "member count")
            check(users.sessions(of: member.user).count == (online[member.user]?.count ?? 0), "a user's sessions")
            check(users.onlineUserCount(in: member.app) == online.keys.filter({ $0.app == member.app }).count, "online users")
            let sessionsByApp = online.reduce(into: [AppID: Int]()) { counts, entry in counts[entry.key.app, default: 0] += entry.value.count }
            check(users.sessionsByApp == sessionsByApp, "the sessions of each app")
            if let failure {
                Issue.record("seed \(seed): the roster differs from the model at step \(step): \(failure)")
                return
            }
        }
        #expect(nextSession > 50, "the run opened sessions")
        #expect(model.version > 500, "the run changed memberships")
    }

    @Test func aListenerListIsTheSameArrayUntilTheChannelChanges() {
        var roster = ChannelRoster()
        let channel = ChannelKey(app: "app", .message, "lobby")
        let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
        let bob = Caller(app: "app", userId: "bob", session: SessionID(2))
        roster.join(alice, channel, features: [.message])
        roster.join(bob, channel, features: [.message, .presence])
        let first = roster.listeners(of: channel, hearing: .message)
        let again = roster.listeners(of: channel, hearing: .message)
        #expect(first == [alice.session, bob.session])
        #expect(first.withUnsafeBufferPointer { $0.baseAddress } == again.withUnsafeBufferPointer { $0.baseAddress })
        roster.join(bob, channel, features: [.presence])
        #expect(roster.listeners(of: channel, hearing: .message) == [alice.session])
    }

    @Test func aMemberThatJoinsDuringAnOperationIsNotAmongItsListeners() {
        var roster = ChannelRoster()
        let channel = ChannelKey(app: "app", .stream, "room")
        let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
        let bob = Caller(app: "app", userId: "bob", session: SessionID(2))
        roster.join(alice, channel, features: [.lock])
        let operationBegan = roster.version
        roster.join(bob, channel, features: [.lock])
        roster.join(alice, channel, features: [.lock, .presence])
        #expect(roster.listeners(of: channel, hearing: .lock, asOf: operationBegan) == [alice.session])
        #expect(roster.listeners(of: channel, hearing: .lock) == [alice.session, bob.session])
    }

    @Test func twoAppsWithTheSameNamesNeverShareAChannel() {
        var roster = ChannelRoster()
        let mine = Caller(app: "app", userId: "alice", session: SessionID(1))
        let theirs = Caller(app: "other", userId: "alice", session: SessionID(2))
        roster.join(mine, mine.channel(.message, "lobby"), features: [.message])
        roster.join(theirs, theirs.channel(.message, "lobby"), features: [.message])
        #expect(roster.listeners(of: mine.channel(.message, "lobby"), hearing: .message) == [mine.session])
        #expect(roster.listeners(of: theirs.channel(.message, "lobby"), hearing: .message) == [theirs.session])
        var users = UserSessions()
        users.open(mine)
        #expect(users.isOnline(mine.user) && !users.isOnline(theirs.user))
        #expect(users.onlineUserCount(in: "app") == 1 && users.onlineUserCount(in: "other") == 0)
    }
}
