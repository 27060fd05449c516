import SwitchboardCore
import SwitchboardWire

/// The message-channel feature: subscribe, unsubscribe, publish, as message-router requests.
enum ChannelBinding: FeatureBinding {
    static func answer(_ operation: ChannelOperation, caller: Caller, bus: EventBus) async throws(RtmError) -> Answer {
        switch operation {
        case .subscribe(let channel, let features):
            _ = try await bus.request(Subscribe(caller: caller, channelName: channel, features: features))
        case .unsubscribe(let channel):
            _ = try await bus.request(Unsubscribe(caller: caller, channelName: channel))
        case .publish(let channelType, let channel, let message, let customType):
            _ = try await bus.request(
                Publish(caller: caller, channelType: channelType, channelName: channel, payload: message, customType: customType))
        }
        return .done
    }

    /// Whether a module answers publishes read in place (`answerInPlace`).
    static func answersInPlace(bus: EventBus) -> Bool { bus.hasHandler(PublishInPlace.self) }

    /// Carries out a publish read in place, read at `receivedAt` (the wall clock's milliseconds),
    /// when its module answers it so; nil, having done nothing, when the module leaves it to
    /// `Publish`. `receiverMemo` is the publisher's connection's (`ReceiverMemo`).
    static func answerInPlace(
        _ publish: PublishView, caller: Caller, receivedAt: UInt64, receiverMemo: UnsafeMutablePointer<ReceiverMemo>, bus: EventBus
    ) throws(RtmError) -> Answer? {
        let request = PublishInPlace(
            caller: caller, channelType: publish.channelType, channelName: publish.channel, payload: publish.message,
            payloadIsString: publish.messageIsString, customType: publish.customType, receivedAt: receivedAt,
            receiverMemo: receiverMemo)
        return try bus.answerInPlace(request).map { _ in .done }
    }

    static func answerAtOnce(
        _ operation: ChannelOperation, caller: Caller, bus: EventBus, admit: () throws(RtmError) -> Void,
        orStart makeReply: () -> StartedReply
    ) throws(RtmError) -> ImmediateOutcome<Answer> {
        guard case .publish(let channelType, let channel, let message, let customType) = operation else { return .mustWait }
        let outcome = try bus.answerAtOnceOrStart(
            Publish.self,
            { () throws(RtmError) in
                try admit()
                return Publish(caller: caller, channelType: channelType, channelName: channel, payload: message, customType: customType)
            },
            orStart: {
                let reply = makeReply()
                return { result in reply(result.map { _ in .done }) }
            })
        switch outcome {
        case .answered: return .answered(.done)
        case .started: return .started
        case .mustWait: return .mustWait
        }
    }
}
