import Testing
import SwitchboardCore
@testable import SwitchboardStorage

/// Who hears which set, and that nobody hears an older set after a newer one.
@Suite struct StorageAudienceTests {
    let room = MetadataTarget.channel(ChannelKey(app: "app", .message, "room"))
    let alice = MetadataTarget.user(UserKey("app", "alice"))

    @Test func aListenerNeverGetsAnOlderSetAfterANewerOne() {
        var audience = StorageAudience()
        #expect(audience.add(SessionID(1), to: room))
        #expect(!audience.add(SessionID(1), to: room))
        #expect(audience.add(SessionID(2), to: room))
        // A snapshot of "no set" (revision 0) is due once.
        #expect(audience.takes(SessionID(1), room, revision: 0))
        #expect(!audience.takes(SessionID(1), room, revision: 0))
        #expect(audience.receivers(of: room, revision: 7) == [SessionID(1), SessionID(2)])
        // The delivery of revision 5 finished after that of 7: nobody gets it.
        #expect(audience.receivers(of: room, revision: 5).isEmpty)
        #expect(!audience.takes(SessionID(2), room, revision: 6))
        #expect(audience.receivers(of: room, revision: 8) == [SessionID(1), SessionID(2)])
    }

    @Test func sessionsLeaveOneTargetOrAll() {
        var audience = StorageAudience()
        _ = audience.add(SessionID(1), to: room)
        _ = audience.add(SessionID(1), to: alice)
        _ = audience.add(SessionID(2), to: alice)
        #expect(audience.userSubscriptions(of: SessionID(1)) == 1)
        #expect(audience.remove(SessionID(1), from: alice))
        #expect(!audience.remove(SessionID(1), from: alice))
        audience.removeAll(of: SessionID(1))
        #expect(!audience.hasListeners(room))
        #expect(audience.hasListeners(alice))
        #expect(audience.receivers(of: alice, revision: 1) == [SessionID(2)])
    }
}
