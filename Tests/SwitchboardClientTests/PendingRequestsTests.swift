import Testing
import SwitchboardCore
import SwitchboardWire
@testable import SwitchboardClient

@Suite(.timeLimit(.minutes(5))) struct PendingRequestsTests {
    @Test func aRequestNotAnsweredInTimeGetsItsFeaturesTimeoutCode() {
        var pending = PendingRequests<Int>()
        let room = ChannelAddress(.message, "room")
        let operations: [(ClientOperation, RtmErrorCode)] = [
            (.session(.login(Login(appId: "a", userId: "u", token: ""))), .loginTimeout),
            (.session(.renewToken(token: "t")), .renewTokenTimeout),
            (.channel(.subscribe(channel: "room", features: .message)), .channelSubscribeTimeout),
            (.channel(.unsubscribe(channel: "room")), .channelUnsubscribeFailed),
            (.stream(.join(channel: "live", token: "", features: [])), .channelJoinFailed),
            (.stream(.leave(channel: "live")), .channelLeaveFailed),
            (.channel(.publish(channelType: .message, channel: "room", message: .string("x"), customType: "")), .channelPublishMessageTimeout),
            (.presence(.whoNow(channel: room, includeUserId: true, includeState: false, page: "")), .presenceOperationTimeout),
            (.lock(.acquireLock(LockAddress(room, "l"), retry: false)), .lockOperationTimeout),
        ]
        for (index, (operation, _)) in operations.enumerated() {
            _ = pending.add(operation, deadline: .seconds(index), waiter: index)
        }
        let expired = pending.takeExpired(now: .seconds(100))
        #expect(expired.map(\.timeoutCode) == operations.map(\.1))
        #expect(expired.map(\.waiter) == Array(operations.indices))
        #expect(pending.isEmpty)
    }

    @Test func aRequestLostWithItsConnectionGetsItsCallsFailureCode() {
        var pending = PendingRequests<Int>()
        let operations: [(ClientOperation, RtmErrorCode)] = [
            (.session(.login(Login(appId: "a", userId: "u", token: ""))), .notConnected),
            (.channel(.subscribe(channel: "room", features: .message)), .channelSubscribeFailed),
            (.channel(.unsubscribe(channel: "room")), .channelUnsubscribeFailed),
            (.channel(.publish(channelType: .message, channel: "room", message: .string("x"), customType: "")), .channelPublishMessageFailed),
            (.stream(.join(channel: "live", token: "", features: [])), .channelJoinFailed),
            (.stream(.leave(channel: "live")), .channelLeaveFailed),
            (.presence(.whereNow(userId: "bob")), .presenceNotConnected),
            (.lock(.getLocks(ChannelAddress(.message, "room"))), .notConnected),
        ]
        for (index, (operation, _)) in operations.enumerated() {
            _ = pending.add(operation, deadline: .seconds(index), waiter: index)
        }
        #expect(pending.takeAll().map(\.lostCode) == operations.map(\.1))
    }
}
