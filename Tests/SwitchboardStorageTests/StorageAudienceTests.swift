import Testing
import SwitchboardCore
@testable import SwitchboardStorage

/// Who hears which set, and that nobody hears an older set after a newer one.
@Suite struct StorageAudienceTests {
    let room = MetadataTarget.channel(ChannelKey(app: "app", .message, "room"))
    let alice = MetadataTarget.user(UserKey("app", "alice"))

    @Test func aListenerNeverGetsAnOlderSetAfterANewerOne() {
        var audience = StorageAudience()
        let added = [audience.add(SessionID(1), to: room), audience.add(SessionID(1), to: room), audience.add(SessionID(2), to: room)]
        #expect(added == [true, false, true])
        // A snapshot of "no set" (revision 0) is due once.
        let snapshots = [audience.takes(SessionID(1), room, revision: 0), audience.takes(SessionID(1), room, revision: 0)]
        #expect(snapshots == [true, false])
        let seven = audience.receivers(of: room, revision: 7)
        #expect(seven == [SessionID(1), SessionID(2)])
        // The delivery of revision 5 finished after that of 7: nobody gets it.
        let five = audience.receivers(of: room, revision: 5)
        let six = audience.takes(SessionID(2), room, revision: 6)
        #expect(five.isEmpty && !six)
        let eight = audience.receivers(of: room, revision: 8)
        #expect(eight == [SessionID(1), SessionID(2)])
    }

    @Test func sessionsLeaveOneTargetOrAll() {
        var audience = StorageAudience()
        _ = audience.add(SessionID(1), to: room)
        _ = audience.add(SessionID(1), to: alice)
        _ = audience.add(SessionID(2), to: alice)
        #expect(audience.userSubscriptions(of: SessionID(1)) == 1)
        let removed = [audience.remove(SessionID(1), from: alice), audience.remove(SessionID(1), from: alice)]
        #expect(removed == [true, false])
        audience.removeAll(of: SessionID(1))
        #expect(!audience.hasListeners(room))
        #expect(audience.hasListeners(alice))
        let receivers = audience.receivers(of: alice, revision: 1)
        #expect(receivers == [SessionID(2)])
    }
}
