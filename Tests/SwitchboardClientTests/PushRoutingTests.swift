import Testing
@testable import SwitchboardClient
import SwitchboardCore

/// Pushes as the app sees them, through the SDK's push router.
@Suite(.timeLimit(.minutes(5))) struct PushRoutingTests {
    @Test func aTokenWarningReachesTheAppWithTheChannelItNames() async {
        let dispatcher = EventDispatcher(callbackQueue: nil)
        let stream = dispatcher.makeStream()
        var router = PushRouter(dispatcher: dispatcher, sealer: nil, log: nil, lockWaits: LockWaits())
        _ = router.route(.session(.tokenPrivilegeWillExpire(secondsLeft: 29, channel: "live")))
        _ = router.route(.session(.tokenPrivilegeWillExpire(secondsLeft: 30)))
        var channels: [String?] = []
        for await event in stream {
            if case .tokenPrivilegeWillExpire(let channel) = event { channels.append(channel) }
            if channels.count == 2 { break }
        }
        #expect(channels == ["live", nil])
    }
}
