import Dispatch
import Foundation
import Synchronization

/// A Signaling client (`AgoraRtmClientKit`): log in, subscribe to channels, publish messages and
/// receive events through delegates or the `events` stream.
///
/// Each asynchronous call exists in the reference's two forms: `async` returning
/// `(response, errorInfo)`, and with a completion block called on the callback queue.
public final class RtmClientKit: Sendable {
    private let engine: ClientEngine
    private let dispatcher: EventDispatcher
    private let settings: ClientSettings
    /// Seals outgoing bodies when the config turns on client-side encryption.
    private let sealer: PayloadSealer?
    /// Keeps completion-block calls in the order they were made.
    private let calls = CallQueue()
    /// Set by `destroy`: every call after it fails at once.
    private let destroyed = Atomic<Bool>(false)

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

    // MARK: Login

    /// Logs in with `token` (empty or nil when the server has no app certificate).
    public func login(_ token: String?) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await run { try await $0.login(token: token) }
    }

    /// Logs in with `token`, calling `completionBlock` when done.
    public func login(_ token: String?, completion completionBlock: RtmOperationBlock? = nil) {
        complete(completionBlock) { try await $0.login(token: token) }
    }

    /// Logs out: the session ends at once, with no presence grace.
    public func logout() async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await run { try await $0.logout() }
    }

    /// Logs out, calling `completionBlock` when done.
    public func logout(_ completionBlock: RtmOperationBlock? = nil) {
        complete(completionBlock) { try await $0.logout() }
    }

    /// Replaces the login token.
    public func renewToken(_ token: String) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await run { try await $0.renewToken(token) }
    }

    /// Replaces the login token, calling `completionBlock` when done.
    public func renewToken(_ token: String, completion completionBlock: RtmOperationBlock? = nil) {
        complete(completionBlock) { try await $0.renewToken(token) }
    }

    /// Releases the client: logs out if needed, closes the connection, ends the event streams.
    @discardableResult
    public func destroy() -> RtmErrorCode {
        guard !destroyed.exchange(true, ordering: .acquiringAndReleasing) else { return .ok }
        let engine = engine
        calls.enqueue { await engine.destroy() }
        calls.finish()
        return .ok
    }

    deinit {
        let engine = engine
        calls.enqueue { await engine.destroy() }
        calls.finish()
    }

    // MARK: Channels

    /// Subscribes to a message channel; `option.features` defaults to `[.message, .presence]`.
    public func subscribe(channelName: String, option subscribeOption: RtmSubscribeOptions?) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        let features = subscribeOption?.features ?? .defaultFeatures
        return await run(channel: channelName) { try await $0.subscribe(channelName, features: features) }
    }

    /// Subscribes to a message channel, calling `completionBlock` when done.
    public func subscribe(
        channelName: String, option subscribeOption: RtmSubscribeOptions?,
        completion completionBlock: RtmOperationBlock? = nil
    ) {
        let features = subscribeOption?.features ?? .defaultFeatures
        complete(completionBlock, channel: channelName) { try await $0.subscribe(channelName, features: features) }
    }

    /// Unsubscribes from a message channel.
    public func unsubscribe(_ channelName: String) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await run(channel: channelName) { try await $0.unsubscribe(channelName) }
    }

    /// Unsubscribes from a message channel, calling `completionBlock` when done.
    public func unsubscribe(_ channelName: String, completion completionBlock: RtmOperationBlock? = nil) {
        complete(completionBlock, channel: channelName) { try await $0.unsubscribe(channelName) }
    }

    // MARK: Messages

    /// Publishes a string on a message channel, or sends it to a user (`option.channelType = .user`).
    public func publish(channelName: String, message: String, option publishOption: RtmPublishOptions?) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        await publish(channelName, .string(message), publishOption)
    }

    /// Publishes a string, calling `completionBlock` when done.
    public func publish(
        channelName: String, message: String, option publishOption: RtmPublishOptions?,
        completion completionBlock: RtmOperationBlock? = nil
    ) {
        publish(channelName, .string(message), publishOption, completionBlock)
    }

    /// Publishes binary data on a message channel, or sends it to a user.
    public func publish(channelName: String, data: Data, option publishOption: RtmPublishOptions?) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        await publish(channelName, .binary(Array(data)), publishOption)
    }

    /// Publishes binary data, calling `completionBlock` when done.
    public func publish(
        channelName: String, data: Data, option publishOption: RtmPublishOptions?,
        completion completionBlock: RtmOperationBlock? = nil
    ) {
        publish(channelName, .binary(Array(data)), publishOption, completionBlock)
    }

    // MARK: Plumbing

    private func publish(_ channel: String, _ payload: MessagePayload, _ options: RtmPublishOptions?) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        let channelType = options?.channelType ?? .message
        let customType = options?.customType ?? ""
        let sealer = sealer
        return await run(channel: channel) {
            let sent = try sealer?.seal(payload) ?? payload
            try await $0.publish(channel: channel, payload: sent, channelType: channelType, customType: customType)
        }
    }

    private func publish(
        _ channel: String, _ payload: MessagePayload, _ options: RtmPublishOptions?, _ completion: RtmOperationBlock?
    ) {
        let channelType = options?.channelType ?? .message
        let customType = options?.customType ?? ""
        let sealer = sealer
        complete(completion, channel: channel) {
            let sent = try sealer?.seal(payload) ?? payload
            try await $0.publish(channel: channel, payload: sent, channelType: channelType, customType: customType)
        }
    }

    private func run(
        channel: String = "", _ body: (ClientEngine) async throws -> Void
    ) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        if let refused = refusedAfterDestroy() { return (nil, refused) }
        do {
            try await body(engine)
            return (RtmCommonResponse(channelName: channel), nil)
        } catch {
            return (nil, Self.errorInfo(error))
        }
    }

    private func refusedAfterDestroy() -> RtmErrorInfo? {
        guard destroyed.load(ordering: .acquiring) else { return nil }
        return RtmErrorInfo(.notInitialized, operation: "", reason: "the client was destroyed")
    }

    private static func errorInfo(_ error: any Error) -> RtmErrorInfo {
        error as? RtmErrorInfo ?? RtmErrorInfo(.invalidParameter, operation: "", reason: "\(error)")
    }

    private func complete(
        _ completion: RtmOperationBlock?, channel: String = "",
        _ body: @escaping @Sendable (ClientEngine) async throws -> Void
    ) {
        let engine = engine
        let queue = dispatcher.queue
        if let refused = refusedAfterDestroy() {
            if let completion { queue.async { completion(nil, refused) } }
            return
        }
        calls.enqueue {
            let result: (RtmCommonResponse?, RtmErrorInfo?)
            do {
                try await body(engine)
                result = (RtmCommonResponse(channelName: channel), nil)
            } catch {
                result = (nil, Self.errorInfo(error))
            }
            guard let completion else { return }
            queue.async { completion(result.0, result.1) }
        }
    }
}
