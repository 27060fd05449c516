import SwitchboardCore
import SwitchboardWire

/// Hands the server's pushes to the app as events: one line per push family. Opens sealed
/// message bodies when client-side encryption is on, and drops (and counts) those that do not open.
struct PushRouter: Sendable {
    let dispatcher: EventDispatcher
    /// Opens incoming bodies when client-side encryption is on.
    let sealer: PayloadSealer?
    let log: LogFile?
    /// Messages dropped because they did not open under the client's key.
    private(set) var undecryptableMessages = 0
    /// Joins the parts of large presence events and topic snapshots.
    private var presenceParts = PartAssembler<PresenceDelivery>()
    private var topicParts = PartAssembler<TopicEvent>()

    /// The lock acquires waiting for a grant.
    let lockWaits: LockWaits

    init(dispatcher: EventDispatcher, sealer: PayloadSealer?, log: LogFile?, lockWaits: LockWaits) {
        self.lockWaits = lockWaits
        self.dispatcher = dispatcher
        self.sealer = sealer
        self.log = log
    }

    /// Hands `push` to the app; returns a request to send back, if the push needs one.
    mutating func route(_ push: Push) -> ClientOperation? {
        switch push {
        case .message(let delivery): if let delivery = opened(delivery) { dispatcher.emit(.message(RtmMessageEvent(delivery))) }
        case .session(.tokenPrivilegeWillExpire(_, let channel)): dispatcher.emit(.tokenPrivilegeWillExpire(channel: channel))
        case .session(.messagesMayBeLost(let type, let channel)):
            dispatcher.emit(.messagesMayBeLost(channelType: type, channelName: channel))
        case .extension(let push): dispatcher.emit(.extension(RtmExtensionEvent(name: push.name, body: RtmMessage(push.body))))
        case .topic(let part): if let event = topicParts.add(part) { dispatcher.emit(.topic(RtmTopicEvent(event))) }
        case .presence(let part): if let event = presenceParts.add(part) { dispatcher.emit(.presence(RtmPresenceEvent(sealer?.open(event) ?? event))) }
        case .storage(let event): dispatcher.emit(.storage(opened(event)))
        case .lock(let push): return route(push)
        }
        return nil
    }

    /// A lock granted to a wait this client no longer has (its call failed when the connection
    /// dropped before the answer came) is given back at once, so no lock stays with nobody's knowledge.
    private func route(_ push: LockPush) -> ClientOperation? {
        switch push {
        case .event(let event): dispatcher.emit(.lock(RtmLockEvent(event)))
        case .granted(let lock, let token):
            guard lockWaits.end(lock, .success(token)) else {
                log?.write(.warn, "granted \(lock), which this client no longer waits for: releasing it")
                return .lock(.releaseLock(lock))
            }
        case .waitFailed(let lock, let code, let reason):
            lockWaits.end(lock, .failure(RtmErrorInfo(code, operation: AcquireLock.operation, reason: reason)))
        }
        return nil
    }

    /// `event` with its values opened when encryption is on. A value that does not open stays
    /// sealed and its item says so (`RtmMetadataItem.isSealed`): the event, and the rest of the
    /// set, still reach the app (a storage event carries the whole set, so a dropped one would
    /// leave the app's copy of every other item stale).
    private func opened(_ event: StorageEvent) -> RtmStorageEvent {
        guard let sealer else { return RtmStorageEvent(event) }
        var opened = event
        let sealedKeys: Set<String>
        (opened.data, sealedKeys) = sealer.openValues(event.data)
        if !sealedKeys.isEmpty {
            log?.write(.warn, "storage event about \(event.target): the values of \(sealedKeys.sorted()) do not open under this client's key; left sealed")
        }
        return RtmStorageEvent(opened, sealedKeys: sealedKeys)
    }

    /// `delivery` with its body opened when encryption is on; `nil` when it does not open (another
    /// key or mode, a plain body, a changed byte): such a message is counted and never delivered.
    private mutating func opened(_ delivery: MessageDelivery) -> MessageDelivery? {
        opened(delivery, "a message from \(delivery.publisher) in \(delivery.channelName) that") { sealer, delivery throws(RtmErrorInfo) in
            var opened = delivery
            opened.payload = try sealer.open(delivery.payload)
            return opened
        }
    }

    /// `open(value)` with the sealer, `value` itself without one; nil (counted, logged as `what`
    /// "do not open") when it does not open.
    private mutating func opened<Value>(
        _ value: Value, _ what: String, _ open: (PayloadSealer, Value) throws(RtmErrorInfo) -> Value
    ) -> Value? {
        guard let sealer else { return value }
        do {
            return try open(sealer, value)
        } catch {
            undecryptableMessages += 1
            log?.write(.warn, "dropped \(what) does not open: \(error)")
            return nil
        }
    }
}
