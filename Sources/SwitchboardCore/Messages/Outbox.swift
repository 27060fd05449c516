/// Something the server sends to a session without being asked: one case per module family.
public enum Push: Sendable, Hashable {
    /// A message on a subscribed channel or the session's user channel (message router).
    case message(MessageDelivery)
    /// About the session itself (session module).
    case session(SessionPush)
    /// A storage event: channel or user metadata (storage module).
    case storage(StorageEvent)
    /// From an extension module.
    case `extension`(ExtensionPush)
    /// A topic event of a joined stream channel (topic router).
    case topic(TopicEvent)
    /// Who joined, left or changed state in a channel (presence).
    case presence(PresenceDelivery)
    /// Lock events, grants and failed waits (lock module).
    case lock(LockPush)

    /// The channel this push belongs to, if any (used to report what a resume could not restore).
    public var channel: ChannelAddress? {
        switch self {
        case .message(let message): ChannelAddress(message.channelType, message.channelName)
        case .storage(let event): event.storageType == .channel ? ChannelAddress(event.channelType, event.target) : nil
        case .session(.messagesMayBeLost(let type, let channel)): ChannelAddress(type, channel)
        case .session, .extension: nil
        case .topic(let event): ChannelAddress(.stream, event.channelName)
        case .presence(let event): ChannelAddress(event.channelType, event.channelName)
        case .lock(let push): push.channel
        }
    }

    /// Bytes counted against the resume buffer.
    public var approximateSize: Int {
        switch self {
        case .message(let message): message.approximateSize
        case .session: 16
        case .storage(let event): event.approximateSize
        case .extension(let push): push.name.utf8.count + push.body.byteCount + 16
        case .topic(let event): event.approximateSize
        case .presence(let event): event.approximateSize
        case .lock(let push): push.approximateSize
        }
    }
}

/// What a resumed session lost while it was away: pushes past the resume buffer's bound, or,
/// for a session taken over from another node, every push that node kept for it.
public struct ResumeLoss: Sendable, Hashable {
    /// How many pushes were dropped (0 when unknown: see `historyLost`).
    public var droppedPushes: Int
    /// The channels whose pushes were dropped, in first-drop order.
    public var channels: [ChannelAddress]
    /// True when the session was taken over from another node: what that node had not yet
    /// delivered, and what was sent while the session had no node, is not replayed and cannot be
    /// counted; `channels` lists every channel such pushes could belong to.
    public var historyLost: Bool

    /// Nothing lost.
    public static let none = ResumeLoss(droppedPushes: 0, channels: [])
    /// The most channels a report names (PROTOCOL.md §2.4).
    public static let maxChannels = 64

    /// Creates a report.
    public init(droppedPushes: Int, channels: [ChannelAddress], historyLost: Bool = false) {
        self.droppedPushes = droppedPushes
        self.channels = channels
        self.historyLost = historyLost
    }
}

/// The port that carries pushes to sessions, implemented by the server around its connections.
///
/// Modules speak of sessions only; which connection a session is on is the server's business
/// (so that a session could live on another node). A push is encoded once and the same bytes go
/// to every receiving connection. A session's pushes are numbered and the recent ones kept, so a
/// client that resumes gets again what it did not receive.
public protocol Outbox: Sendable {
    /// A session was created: keep its pushes until the server binds it to a connection.
    func open(_ session: SessionID)
    /// A session another node held was taken over: as `open`, with its pushes numbered on from
    /// `received`, the count its client had, so a later resume here counts as the client does.
    func open(_ session: SessionID, numberedFrom received: UInt64)
    /// Sends `push` to every session in `sessions` (unknown sessions are skipped).
    func deliver(_ push: Push, to sessions: [SessionID])
    /// Sends `push` to `session` alone (skipped when unknown): a user-channel message's usual
    /// receiver, without a list to build. The push is the outbox's: it can be encoded from
    /// where it lies, with no copy for each of its strings.
    func deliver(_ push: consuming Push, to session: SessionID)
    /// Sends `message` to `session` alone (skipped when unknown), as `deliver(.message(…), to:)`
    /// would: a publish read in place, whose bytes the outbox may encode straight from where they
    /// lie. The bytes are lent for this call only; the message is given, so the outbox can reach
    /// it where it lies without a copy (which would count a reference to each of its strings).
    func deliver(_ message: consuming LentMessage, to session: SessionID)
    /// Sends `message` to `session` alone, as `deliver(_:to:)`, with the memo of one publishing
    /// connection (`OutboxMemo`, read and filled on that connection's thread only): a connection
    /// publishing to one session over and over finds it without a lookup.
    func deliver(_ message: consuming LentMessage, to session: SessionID, memo: inout OutboxMemo)
    /// Sends `message` to every session in `sessions`, as `deliver(.message(…), to:)` would: a
    /// publish read in place, encoded once from where its bytes lie. The bytes are lent for this
    /// call only.
    func deliver(_ message: LentMessage, to sessions: [SessionID])
    /// Sends `push` like `deliver(_:to:)`; on a backlogged connection, pushes of a higher
    /// `priority` are written before those of lower ones waiting with them, and pushes of one
    /// priority keep their order.
    func deliver(_ push: Push, to sessions: [SessionID], priority: RtmMessagePriority)
    /// Tells the client of `session` why its connection is closed (a link-state reason), then
    /// closes that connection. The session itself stays, with its kept pushes, until `release`.
    func disconnect(_ session: SessionID, reason: RtmLinkStateChangeReason, detail: String)
    /// The session ended: forget it and anything kept for it.
    func release(_ session: SessionID)
}

extension Outbox {
    /// An outbox that keeps no numbered pushes opens a taken-over session as any other.
    public func open(_ session: SessionID, numberedFrom received: UInt64) {
        open(session)
    }

    /// Sends `push` to the list of `session` alone.
    public func deliver(_ push: consuming Push, to session: SessionID) {
        deliver(push, to: [session])
    }

    /// Sends a copy of `message` to `session` alone.
    public func deliver(_ message: consuming LentMessage, to session: SessionID) {
        deliver(.message(message.owned()), to: session)
    }

    /// An outbox that keeps no memo delivers as without one.
    public func deliver(_ message: consuming LentMessage, to session: SessionID, memo: inout OutboxMemo) {
        deliver(message, to: session)
    }

    /// Sends a copy of `message` to every session in `sessions`.
    public func deliver(_ message: LentMessage, to sessions: [SessionID]) {
        deliver(.message(message.owned()), to: sessions)
    }

    /// An outbox without priority lanes delivers every push in order.
    public func deliver(_ push: Push, to sessions: [SessionID], priority: RtmMessagePriority) {
        deliver(push, to: sessions)
    }
}
