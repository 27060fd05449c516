import Testing
import SwitchboardCore
@testable import SwitchboardStorage

/// Who subscribes to which user's metadata, and that nobody hears an older set after a newer one.
@Suite(.timeLimit(.minutes(2))) struct StorageAudienceTests {
    let room = MetadataTarget.channel(ChannelKey(app: "app", .message, "room"))
    let alice = UserKey("app", "alice")

    @Test func aListenerNeverGetsAnOlderSetAfterANewerOne() {
        var audience = StorageAudience()
        let listeners = [SessionID(1), SessionID(2)]
        // A snapshot of "no set" (revision 0) is due once.
        let snapshots = [audience.due([SessionID(1)], room, revision: 0), audience.due([SessionID(1)], room, revision: 0)]
        #expect(snapshots == [[SessionID(1)], []])
        #expect(audience.due(listeners, room, revision: 7) == listeners)
        // The delivery of revision 5 finished after that of 7: nobody gets it.
        #expect(audience.due(listeners, room, revision: 5).isEmpty)
        #expect(audience.due([SessionID(2)], room, revision: 6).isEmpty)
        #expect(audience.due(listeners, room, revision: 8) == listeners)
        // A listener that stopped and came back starts afresh.
        audience.forget(SessionID(1), room)
        #expect(audience.due(listeners, room, revision: 3) == [SessionID(1)])
    }

    @Test func sessionsUnsubscribeOneUserOrAll() {
        var audience = StorageAudience()
        let bob = UserKey("app", "bob")
        let added = [audience.subscribe(SessionID(1), to: alice), audience.subscribe(SessionID(1), to: alice)]
        #expect(added == [true, false])
        _ = audience.subscribe(SessionID(1), to: bob)
        _ = audience.subscribe(SessionID(2), to: alice)
        #expect(audience.userSubscriptions(of: SessionID(1)) == 2)
        let removed = [audience.unsubscribe(SessionID(1), from: bob), audience.unsubscribe(SessionID(1), from: bob)]
        #expect(removed == [true, false])
        audience.removeAll(of: SessionID(1))
        #expect(audience.userSubscriptions(of: SessionID(1)) == 0)
        #expect(audience.subscribers(of: alice) == [SessionID(2)])
        #expect(audience.subscribers(of: UserKey("other", "alice")).isEmpty)
    }
}
