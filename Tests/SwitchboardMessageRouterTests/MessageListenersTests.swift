import Testing
import SwitchboardCore
@testable import SwitchboardMessageRouter
import SwitchboardTestKit

@Suite(.timeLimit(.minutes(2))) struct MessageListenersTests {
    let room = ChannelKey(app: "app", .message, "room")

    func change(_ session: UInt64, _ channel: ChannelKey, _ features: ChannelFeatures?) -> MembershipChange {
        MembershipChange(
            member: Caller(app: channel.app, userId: "u\(session)", session: SessionID(session)), channel: channel,
            before: nil, after: features, version: 0)
    }

    @Test func aChannelWithOneListenerNamesItAndOnlyMessageHearersListen() {
        var listeners = MessageListeners()
        listeners.apply(change(7, room, [.message, .presence]))
        listeners.apply(change(8, room, [.presence]))
        guard case .one(let only) = listeners.listeners(of: room) else {
            Issue.record("one listener expected")
            return
        }
        #expect(only == SessionID(7))
        // A subscription that stops hearing messages leaves the list; the channel goes with its last.
        listeners.apply(change(7, room, [.presence]))
        #expect(listeners.listeners(of: room).sessions.isEmpty)
        #expect(listeners.channelCount == 0)
    }

    @Test func aLargerChannelAnswersTheSameSortedListUntilItChanges() {
        var listeners = MessageListeners()
        for session in [5, 3, 9] as [UInt64] { listeners.apply(change(session, room, .message)) }
        guard case .list(let first) = listeners.listeners(of: room), case .list(let again) = listeners.listeners(of: room) else {
            Issue.record("a list expected")
            return
        }
        #expect(first == [3, 5, 9].map(SessionID.init))
        #expect(first.withUnsafeBufferPointer { $0.baseAddress } == again.withUnsafeBufferPointer { $0.baseAddress })
        // A subscription that changes its features but still hears messages changes nothing.
        listeners.apply(change(5, room, [.message, .lock]))
        guard case .list(let unchanged) = listeners.listeners(of: room) else { return }
        #expect(unchanged.withUnsafeBufferPointer { $0.baseAddress } == first.withUnsafeBufferPointer { $0.baseAddress })
        listeners.apply(change(3, room, nil))
        #expect(listeners.listeners(of: room).sessions == [5, 9].map(SessionID.init))
        listeners.apply(change(9, room, nil))
        guard case .one(let last) = listeners.listeners(of: room) else {
            Issue.record("one listener expected")
            return
        }
        #expect(last == SessionID(5))
    }

    /// Random joins, changes and leaves over a few channels agree with a plain set per channel.
    @Test(arguments: [1, 2, 3] as [UInt64]) func randomChangesAgreeWithAPlainModel(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let channels = (0..<3).map { ChannelKey(app: "app", .message, "c\($0)") }
        var listeners = MessageListeners()
        var model: [ChannelKey: Set<SessionID>] = [:]
        let choices: [ChannelFeatures?] = [nil, .message, [.message, .presence], .presence, .lock]
        for _ in 0..<2_000 {
            let channel = channels.randomElement(using: &random)!
            let session = UInt64.random(in: 1...6, using: &random)
            let features = choices.randomElement(using: &random)!
            listeners.apply(change(session, channel, features))
            if features?.contains(.message) == true {
                model[channel, default: []].insert(SessionID(session))
            } else {
                model[channel]?.remove(SessionID(session))
                if model[channel]?.isEmpty == true { model[channel] = nil }
            }
            for channel in channels {
                let expected = (model[channel] ?? []).sorted()
                let answered = listeners.listeners(of: channel)
                #expect(answered.sessions == expected)
                #expect(answered.count == expected.count)
            }
            #expect(listeners.channelCount == model.count)
        }
    }
}
