import Synchronization
import SwitchboardCore

/// An in-memory stand-in for the message router: keeps subscriptions in a dictionary, records
/// every accepted publish, and delivers message-channel messages to subscribers through the
/// outbox — no limits, no features, no user channels.
public final class FakeMessageRouter: Module {
    public let name = "fake-message-router"
    private let state = Mutex<(subscribers: [ChannelKey: [SessionID]], published: [Publish])>(([:], []))

    /// Creates an empty router.
    public init() {}

    /// Every publish it accepted, in order.
    public var published: [Publish] { state.withLock { $0.published } }

    public func start(_ context: ModuleContext) async {
        context.bus.handle(Subscribe.self) { [self] request in
            let channel = request.caller.channel(.message, request.channelName)
            state.withLock { $0.subscribers[channel, default: []].append(request.caller.session) }
            return Done()
        }
        context.bus.handle(Unsubscribe.self) { [self] request in
            let channel = request.caller.channel(.message, request.channelName)
            state.withLock { $0.subscribers[channel]?.removeAll { $0 == request.caller.session } }
            return Done()
        }
        context.bus.handle(Publish.self) { [self] request in
            let channel = request.caller.channel(request.channelType, request.channelName)
            let receivers = state.withLock { state -> [SessionID] in
                state.published.append(request)
                return state.subscribers[channel] ?? []
            }
            let delivery = MessageDelivery(
                channelType: request.channelType, channelName: request.channelName, payload: request.payload,
                publisher: request.caller.userId, customType: request.customType,
                timestamp: context.clock.wallMilliseconds)
            context.outbox.deliver(.message(delivery), to: receivers)
            return Done()
        }
    }
}
