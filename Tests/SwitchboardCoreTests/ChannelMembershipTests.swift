import Testing
@testable import SwitchboardCore
import SwitchboardTestKit

@Suite(.timeLimit(.minutes(1))) struct ChannelMembershipTests {
    let ana = Caller(app: "app", userId: "ana", session: SessionID(1))
    let bo = Caller(app: "app", userId: "bo", session: SessionID(2))
    let room = ChannelKey(app: "app", .message, "room")

    func joined(_ caller: Caller, _ features: ChannelFeatures) -> ChannelJoined {
        ChannelJoined(caller: caller, channel: room, features: features)
    }

    @Test func aMembershipKeepingAFeatureHoldsOnlyItsHearers() {
        let members = ChannelMembership(keeping: .metadata)
        // A member that does not hear metadata is neither kept nor reported.
        #expect(members.apply(joined(ana, [.message, .presence])) == nil)
        #expect(!members.contains(ana.session, in: room))
        let join = members.apply(joined(bo, [.message, .metadata]))
        #expect(join?.isJoin == true && join?.gained(.metadata) == true)
        #expect(members.read { $0.listeners(of: room, hearing: .metadata) } == [bo.session])
        // A kept member that stops hearing metadata goes, and the change says what it hears now.
        let change = members.apply(joined(bo, [.message]))
        #expect(change?.lost(.metadata) == true)
        #expect(change?.before == [.message, .metadata] && change?.after == [.message] && change?.reason == nil)
        #expect(!members.contains(bo.session, in: room))
        // Its later leave finds nothing to report.
        #expect(members.apply(ChannelLeft(caller: bo, channel: room, reason: .left)) == nil)
    }

    @Test func aMembershipKeepingEverythingIsTheWholeRoster() {
        let members = ChannelMembership()
        #expect(members.apply(joined(ana, [.presence]))?.isJoin == true)
        #expect(members.apply(joined(ana, [.presence, .lock]))?.gained(.lock) == true)
        #expect(members.contains(ana.session, in: room))
        #expect(members.apply(ChannelLeft(caller: ana, channel: room, reason: .left))?.isLeave == true)
    }

    @Test func aMembershipKnowingEveryMemberKeepsOnlyTheHearersDetails() {
        let members = ChannelMembership(keeping: .lock, knowingEveryMember: true)
        // A member that does not hear lock events is known and reported, but not in the roster.
        #expect(members.apply(joined(ana, [.message]))?.isJoin == true)
        #expect(members.contains(ana.session, in: room))
        #expect(members.read { $0.members(of: room).map(\.session) } == [])
        // It starts hearing them: the change says what it heard before, and the roster has it.
        let gained = members.apply(joined(ana, [.message, .lock]))
        #expect(gained?.before == [.message] && gained?.gained(.lock) == true && gained?.isJoin == false)
        #expect(members.read { $0.listeners(of: room, hearing: .lock) } == [ana.session])
        // It stops again: reported, still a member, out of the roster.
        #expect(members.apply(joined(ana, [.presence]))?.lost(.lock) == true)
        #expect(members.contains(ana.session, in: room))
        #expect(members.read { $0.listeners(of: room, hearing: .lock) } == [])
        // Its leave is reported with the features it had.
        let leave = members.apply(ChannelLeft(caller: ana, channel: room, reason: .left))
        #expect(leave?.isLeave == true && leave?.before == [.presence])
        #expect(!members.contains(ana.session, in: room))
        // A session's end reports every channel it was in, kept or not.
        let hall = ChannelKey(app: "app", .stream, "hall")
        _ = members.apply(joined(bo, [.lock]))
        _ = members.apply(ChannelJoined(caller: bo, channel: hall, features: []))
        let left = members.apply(SessionClosed(caller: bo, reason: .logout))
        #expect(left.map { $0.channel } == [room, hall])
        #expect(!members.contains(bo.session, in: room) && !members.contains(bo.session, in: hall))
        // A join after the end is ignored.
        #expect(members.apply(ChannelJoined(caller: bo, channel: hall, features: [])) == nil)
    }

    /// Against the whole roster, over a seeded run of joins, changes of features, leaves and
    /// session ends: a membership knowing every member reports the same changes, answers
    /// `contains` the same, and its roster's lock listeners are the whole roster's.
    @Test(arguments: [1, 2, 3, 20_261_203] as [UInt64])
    func knowingEveryMemberReportsWhatTheWholeRosterReports(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let whole = ChannelMembership()
        let light = ChannelMembership(keeping: .lock, knowingEveryMember: true)
        let callers = (1...5).map { Caller(app: "app", userId: "u\($0 % 3)", session: SessionID(UInt64($0))) }
        let channels = [
            ChannelKey(app: "app", .message, "a"), ChannelKey(app: "app", .message, "b"), ChannelKey(app: "app", .stream, "a"),
        ]
        let choices: [ChannelFeatures] = [[], [.message], [.lock], [.message, .lock], [.presence, .metadata], [.lock, .presence]]
        func same(_ a: MembershipChange?, _ b: MembershipChange?) -> Bool {
            a?.member == b?.member && a?.channel == b?.channel && a?.before == b?.before && a?.after == b?.after
                && a?.reason == b?.reason
        }
        var ended = 0
        for step in 0..<600 {
            let caller = callers[Int(random.next() % UInt64(callers.count))]
            let channel = channels[Int(random.next() % UInt64(channels.count))]
            switch random.next() % 10 {
            case 0 where ended < 3:
                ended += 1
                let event = SessionClosed(caller: caller, reason: .logout)
                let expected = whole.apply(event), actual = light.apply(event)
                #expect(expected.count == actual.count && zip(expected, actual).allSatisfy { same($0, $1) }, "step \(step)")
            case 0...2:
                let event = ChannelLeft(caller: caller, channel: channel, reason: .left)
                #expect(same(whole.apply(event), light.apply(event)), "step \(step)")
            default:
                let features = choices[Int(random.next() % UInt64(choices.count))]
                let event = ChannelJoined(caller: caller, channel: channel, features: features)
                #expect(same(whole.apply(event), light.apply(event)), "step \(step)")
            }
            for member in callers {
                for channel in channels {
                    #expect(whole.contains(member.session, in: channel) == light.contains(member.session, in: channel))
                }
            }
            for channel in channels {
                #expect(whole.read { $0.listeners(of: channel, hearing: .lock) } == light.read { $0.listeners(of: channel, hearing: .lock) })
            }
        }
    }
}
