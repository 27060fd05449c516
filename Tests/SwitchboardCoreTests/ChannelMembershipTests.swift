import Testing
@testable import SwitchboardCore

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
}
