import Dispatch
import Foundation
import SwitchboardCore

/// A Signaling client (`AgoraRtmClientKit`): log in, subscribe to channels, publish messages and
/// receive events through delegates or the `events` stream.
///
/// Each asynchronous call exists in the reference's two forms: `async` returning
/// `(response, errorInfo)`, and with a completion block called on the callback queue. The calls
/// of each feature live in a file of their own (`RtmClientKit+Session`, `+Messages`, …), each
/// built on one `call` helper (`RtmCall`).
public final class RtmClientKit: Sendable {
    let engine: ClientEngine
    let dispatcher: EventDispatcher
    let settings: ClientSettings
    /// Seals outgoing bodies when the config turns on client-side encryption.
    let sealer: PayloadSealer?
    /// Issues completion-block calls in the order they were made.
    let calls = CallQueue()
    /// The message channels this client is subscribed to, restored after a lost session.
    let subscriptions = ChannelSubscriptions()
    /// The stream channels this client made and joined, rejoined after a lost session.
    let streamChannels = StreamChannels()
    /// The presence states this client set, applied on joining and after a lost session.
    let presenceStates = PresenceStates()
    /// The users whose metadata this client subscribes to, restored after a lost session.
    let userMetadataSubscriptions = UserMetadataSubscriptions()
    /// Set by `destroy`: every call after it fails at once.
    private let destroyed = Locked(false)

    /// Creates a client. Throws `RtmErrorInfo` when the configuration is invalid.
    public convenience init(_ config: RtmClientConfig, delegate: (any RtmClientDelegate)?) throws {
        try self.init(config, delegate: delegate, clock: SystemClock())
    }

    /// Creates a client on `clock` (tests drive heartbeats and timeouts with a manual clock).
    init(_ config: RtmClientConfig, delegate: (any RtmClientDelegate)?, clock: any SwitchboardClock) throws {
        settings = try ClientSettings(config)
        let sealer = try settings.encryption.map { encryption throws(RtmErrorInfo) in try PayloadSealer(encryption) }
        self.sealer = sealer
        #if canImport(Darwin)
        dispatcher = EventDispatcher(callbackQueue: config.callbackQueue ?? .main)
        #else
        dispatcher = EventDispatcher(callbackQueue: config.callbackQueue)
        #endif
        engine = try ClientEngine(settings: settings, dispatcher: dispatcher, clock: clock, sealer: sealer)
        dispatcher.bind(self)
        if let delegate { dispatcher.add(delegate) }
        let restorable: [any RestorableState] = [
            subscriptions, streamChannels, presenceStates, userMetadataSubscriptions, engine.lockWaits,
        ]
        // In this order: a lost session's channels are subscribed and joined again before their
        // states are set.
        let engine = engine
        calls.enqueue {
            for state in restorable { await engine.keep(state) }
        }
    }

    /// Adds a delegate (held weakly).
    public func addDelegate(_ delegate: any RtmClientDelegate) { dispatcher.add(delegate) }

    /// Removes a delegate.
    public func removeDelegate(_ delegate: any RtmClientDelegate) { dispatcher.remove(delegate) }

    /// Every event from now on, in the order the server sent them, as an async sequence.
    public var events: AsyncStream<RtmEvent> { dispatcher.makeStream() }

    /// The current link state.
    public var linkState: RtmLinkState {
        get async { await engine.linkState }
    }

    /// Drops the connection the way a dead network does, without telling the server (tests).
    func loseConnectionSilently() async { await engine.loseConnectionSilently() }

    /// Messages dropped because they did not open under this client's encryption key.
    var undecryptableMessages: Int {
        get async { await engine.undecryptableMessages }
    }

    /// Releases the client: every connection attempt stops at once, the connection closes, the
    /// event streams end.
    @discardableResult
    public func destroy() -> RtmErrorCode {
        guard !destroyed.exchange(true) else { return .ok }
        let engine = engine
        Task { await engine.destroy() }
        calls.finish()
        return .ok
    }

    deinit {
        let engine = engine
        Task { await engine.destroy() }
        calls.finish()
    }

    /// The error every call gets once the client is destroyed.
    func refusedAfterDestroy() -> RtmErrorInfo? {
        guard destroyed.load() else { return nil }
        return RtmErrorInfo(.notInitialized, operation: "", reason: "the client was destroyed")
    }
}
