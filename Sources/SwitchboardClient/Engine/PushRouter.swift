import SwitchboardCore

/// Hands the server's pushes to the app as events: one line per push family. Opens sealed
/// message bodies when client-side encryption is on, and drops (and counts) those that do not open.
struct PushRouter: Sendable {
    let dispatcher: EventDispatcher
    /// Opens incoming bodies when client-side encryption is on.
    let sealer: PayloadSealer?
    let log: LogFile?
    /// Messages dropped because they did not open under the client's key.
    private(set) var undecryptableMessages = 0

    init(dispatcher: EventDispatcher, sealer: PayloadSealer?, log: LogFile?) {
        self.dispatcher = dispatcher
        self.sealer = sealer
        self.log = log
    }

    mutating func route(_ push: Push) {
        switch push {
        case .message(let delivery): if let delivery = opened(delivery) { dispatcher.emit(.message(RtmMessageEvent(delivery))) }
        case .session(.tokenPrivilegeWillExpire): dispatcher.emit(.tokenPrivilegeWillExpire(channel: nil))
        case .extension(let push): dispatcher.emit(.extension(RtmExtensionEvent(name: push.name, body: RtmMessage(push.body))))
        case .topic(let event): dispatcher.emit(.topic(RtmTopicEvent(event)))
        case .lock: break
        }
    }

    /// `delivery` with its body opened when encryption is on; `nil` when it does not open (another
    /// key or mode, a plain body, a changed byte): such a message is counted and never delivered.
    private mutating func opened(_ delivery: MessageDelivery) -> MessageDelivery? {
        guard let sealer else { return delivery }
        do {
            var opened = delivery
            opened.payload = try sealer.open(delivery.payload)
            return opened
        } catch {
            undecryptableMessages += 1
            log?.write(.warn, "dropped a message from \(delivery.publisher) in \(delivery.channelName) that does not open: \(error)")
            return nil
        }
    }
}
