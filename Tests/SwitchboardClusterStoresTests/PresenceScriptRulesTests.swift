import Testing
import SwitchboardClusterStores
import SwitchboardCore
import SwitchboardPresence
import SwitchboardTestKit

/// The scripts run the rules of `PresenceTable` in Lua. The same random joins (quiet or not,
/// hearing presence or not, several sessions per user), leaves, state changes past the limits,
/// pages and session sightings, given to the Redis store and to the in-memory store, get the same
/// answers: the same changes, states, pages, listeners and channels, the same refusals with the
/// same reasons. (Page tokens are numbers of each store's own; pages are compared by their users,
/// each store following its own tokens.)
@Suite(.timeLimit(.minutes(3))) struct PresenceScriptRulesTests {
    let channels = [ChannelKey(app: "app", .message, "room"), ChannelKey(app: "app", .stream, "room"), ChannelKey(app: "app", .message, "hall")]
    let users = ["u1", "u2", "u3:x", "ü4"]
    let featureChoices: [ChannelFeatures] = [[], [.presence], [.beQuiet], [.presence, .beQuiet], [.presence, .metadata]]

    /// What either store answered.
    enum Outcome: Equatable {
        case change(MemberChange?)
        case state(StateChange)
        case member(MemberState?)
        case users([[UserState]])
        case sessions([SessionID])
        case channels([ChannelKey])
        case count(Int)
        case presence([UserPresence])
        case done
        case refused(RtmErrorCode, String)
    }

    func outcome(_ body: () async throws(RtmError) -> Outcome) async -> Outcome {
        do {
            return try await body()
        } catch {
            return .refused(error.code, error.reason)
        }
    }

    /// Every page of `channel`, following the store's own tokens.
    func allPages(_ store: any PresenceStore, _ channel: ChannelKey, limit: Int, budget: Int, withStates: Bool) async throws(RtmError) -> Outcome {
        var pages: [[UserState]] = []
        var cursor: UInt64 = 0
        while true {
            let page = try await store.members(of: channel, after: cursor, limit: limit, budget: budget, withStates: withStates)
            pages.append(page.users)
            guard let next = page.next, pages.count < 50 else { return .users(pages) }
            cursor = next
        }
    }

    @Test func randomStepsGetTheSameAnswersFromBothStores() async throws {
        var refusals = Set<RtmErrorCode>()
        var kinds = Set<String>()
        for seed in 1...4 as ClosedRange<UInt64> {
            let (codes, seen) = try await compareStores(seed: seed)
            refusals.formUnion(codes)
            kinds.formUnion(seen)
        }
        // Every rule refused something, and members came and went in every way.
        #expect(
            refusals == [.channelNotSubscribed, .channelNotJoined, .presenceStateCountOverflow, .presenceStateValueSizeOverflow],
            "\(refusals)")
        #expect(kinds.isSuperset(of: ["appeared", "hid", "moreSessions", "left", "leftUnseen", "featuresOnly"]), "\(kinds)")
    }

    /// Runs the steps of `seed` on both stores, side by side; returns the codes they refused with
    /// and the kinds of membership changes seen.
    func compareStores(seed: UInt64) async throws -> (Set<RtmErrorCode>, Set<String>) {
        try await RedisServer.with { redis in
            let shared = try await redis.presenceStore()
            let memory = InMemoryPresenceStore()
            var random = SeededGenerator(seed: seed)
            var limits = Limits()
            limits.presence.statesPerUser = 4
            limits.presence.stateMaxBytes = 24
            var now: UInt64 = 1_700_000_000_000
            var refusals = Set<RtmErrorCode>()
            var kinds = Set<String>()
            for step in 0..<400 {
                let channel = channels[random.next(below: channels.count)]
                let session = UInt64(1 + random.next(below: 8))
                // A session belongs to one user.
                let caller = Caller(app: "app", userId: users[Int(session) % users.count], session: SessionID(session))
                now += UInt64(random.next(below: 50))
                let time = WallClockTime(millisecondsSince1970: now)
                let (a, b): (Outcome, Outcome)
                switch random.next(below: 12) {
                case 0, 1, 2:
                    let features = featureChoices[random.next(below: featureChoices.count)]
                    a = await outcome { () throws(RtmError) in .change(try await shared.join(caller, channel, features: features)) }
                    b = await outcome { () throws(RtmError) in .change(try await memory.join(caller, channel, features: features)) }
                case 3, 4:
                    let timedOut = random.next(below: 2) == 0
                    a = await outcome { () throws(RtmError) in .change(try await shared.leave(caller, channel, timedOut: timedOut)) }
                    b = await outcome { () throws(RtmError) in .change(try await memory.leave(caller, channel)) }
                case 5, 6:
                    let items = randomItems(&random)
                    a = await outcome { () throws(RtmError) in .state(try await shared.setState(of: caller.user, in: channel, items: items, limits: limits)) }
                    b = await outcome { () throws(RtmError) in .state(try await memory.setState(of: caller.user, in: channel, items: items, limits: limits)) }
                case 7:
                    let keys = ["a", "b", "c", "d", "e"].filter { _ in random.next(below: 3) == 0 }
                    a = await outcome { () throws(RtmError) in .state(try await shared.removeState(of: caller.user, in: channel, keys: keys)) }
                    b = await outcome { () throws(RtmError) in .state(try await memory.removeState(of: caller.user, in: channel, keys: keys)) }
                case 8:
                    let limit = 1 + random.next(below: 3), budget = [Int.max, 30, 60][random.next(below: 3)]
                    let withStates = random.next(below: 2) == 0
                    a = await outcome { () throws(RtmError) in try await allPages(shared, channel, limit: limit, budget: budget, withStates: withStates) }
                    b = await outcome { () throws(RtmError) in try await allPages(memory, channel, limit: limit, budget: budget, withStates: withStates) }
                case 9:
                    let sighting = [Sighting.opened, .suspended, .resumed, .closed][random.next(below: 4)]
                    a = await outcome { () throws(RtmError) in
                        try await shared.record(sighting, of: caller, at: time)
                        return .presence(try await shared.presence(of: users.map { UserKey("app", $0) }, now: time))
                    }
                    b = await outcome { () throws(RtmError) in
                        try await memory.record(sighting, of: caller, at: time)
                        return .presence(try await memory.presence(of: users.map { UserKey("app", $0) }, now: time))
                    }
                default:
                    a = await outcome { () throws(RtmError) in .member(try await shared.state(of: caller.user, in: channel)) }
                    b = await outcome { () throws(RtmError) in .member(try await memory.state(of: caller.user, in: channel)) }
                }
                #expect(a == b, "seed \(seed) step \(step)")
                guard a == b else { break }
                switch a {
                case .refused(let code, _): refusals.insert(code)
                case .change(let change?): kinds.insert(kind(of: change))
                default: break
                }
                // What every step leaves behind reads the same from both.
                for user in users.map({ UserKey("app", $0) }) {
                    #expect(try await shared.visibleChannels(of: user) == memory.visibleChannels(of: user), "seed \(seed) step \(step)")
                }
                #expect(try await shared.listeners(of: channel) == memory.listeners(of: channel).sorted(), "seed \(seed) step \(step)")
                #expect(try await shared.occupancy(of: channel) == memory.occupancy(of: channel), "seed \(seed) step \(step)")
                let snapshots = (try await shared.snapshot(of: channel, limit: 3), try await memory.snapshot(of: channel, limit: 3))
                #expect(snapshots.0.users == snapshots.1.users && snapshots.0.occupancy == snapshots.1.occupancy, "seed \(seed) step \(step)")
            }
            await shared.close()
            return (refusals, kinds)
        }
    }

    /// How a membership change changed what others see.
    func kind(of change: MemberChange) -> String {
        let was = change.before?.isVisible ?? false, now = change.after?.isVisible ?? false
        switch (was, now) {
        case (false, true): return change.otherVisibleSessions == 0 ? "appeared" : "moreSessions"
        case (true, false): return change.after == nil ? "left" : "hid"
        default: return change.after == nil ? "leftUnseen" : "featuresOnly"
        }
    }

    /// Items of the keys and sizes that pass and break the limits now and then.
    func randomItems(_ random: inout SeededGenerator) -> [StateItem] {
        var keys = ["a", "b", "c", "d", "e"].filter { _ in random.next(below: 3) == 0 }
        if keys.isEmpty { keys = ["b"] }
        return keys.map { key in
            let value = String(decoding: random.bytes(count: [0, 1, 3, 9, 20][random.next(below: 5)], in: 0x61...0x7A), as: UTF8.self)
            return StateItem(key: key, value: value)
        }
    }
}
