/// A message as subscribers receive it.
public struct MessageDelivery: Sendable, Hashable {
    /// The channel type it was published on (`.message` or `.user`).
    public var channelType: RtmChannelType
    /// The channel name; for a user channel, the publisher's user id as the receiver sees it.
    public var channelName: String
    /// The topic; empty outside stream channels.
    public var channelTopic: String
    /// The body as sent.
    public var payload: MessagePayload
    /// The publisher's user id.
    public var publisher: UserID
    /// The user-defined type.
    public var customType: String
    /// Server time of publication, milliseconds since 1970.
    public var timestamp: UInt64

    /// Creates a delivery.
    public init(
        channelType: RtmChannelType, channelName: String, channelTopic: String = "",
        payload: MessagePayload, publisher: UserID, customType: String, timestamp: UInt64
    ) {
        self.channelType = channelType
        self.channelName = channelName
        self.channelTopic = channelTopic
        self.payload = payload
        self.publisher = publisher
        self.customType = customType
        self.timestamp = timestamp
    }
}

/// Something the server sends to a session without being asked.
public enum Push: Sendable, Hashable {
    /// A message on a subscribed channel or the session's user channel.
    case message(MessageDelivery)
    /// The session's token expires soon (seconds left).
    case tokenPrivilegeWillExpire(secondsLeft: Int)

    /// The channel this push belongs to, if any (used to report what a resume could not restore).
    public var channel: ChannelKey? {
        switch self {
        case .message(let message): ChannelKey(message.channelType, message.channelName)
        case .tokenPrivilegeWillExpire: nil
        }
    }

    /// Bytes counted against the resume buffer.
    public var approximateSize: Int {
        switch self {
        case .message(let message):
            message.payload.byteCount + message.channelName.utf8.count + message.publisher.utf8.count
                + message.customType.utf8.count + 32
        case .tokenPrivilegeWillExpire: 16
        }
    }
}

/// What a resumed session lost while it was away: pushes past the resume buffer's bound.
public struct ResumeLoss: Sendable, Hashable {
    /// How many pushes were dropped.
    public var droppedPushes: Int
    /// The channels whose pushes were dropped, in first-drop order.
    public var channels: [ChannelKey]

    /// Nothing lost.
    public static let none = ResumeLoss(droppedPushes: 0, channels: [])

    /// Creates a report.
    public init(droppedPushes: Int, channels: [ChannelKey]) {
        self.droppedPushes = droppedPushes
        self.channels = channels
    }
}

/// The port that carries pushes to sessions, implemented by the server around its connections.
///
/// A push is encoded once and the same bytes go to every receiving connection. While a session
/// is detached (its connection dropped, the session not yet timed out) its pushes are kept, up to
/// the resume bound, and sent first when it is attached again.
public protocol Outbox: Sendable {
    /// Sends `push` to every session in `sessions` (unknown sessions are skipped).
    func deliver(_ push: Push, to sessions: [SessionID])
    /// Binds `session` to `connection`, sending first the pushes the client has not received:
    /// `received` is how many of this session's pushes the client says it got (0 for a new
    /// session). Returns what could not be sent again.
    func attach(_ session: SessionID, to connection: ConnectionID, received: UInt64) -> ResumeLoss
    /// The session lost its connection: keep its pushes from now on.
    func detach(_ session: SessionID)
    /// The session ended: forget it and anything kept for it.
    func release(_ session: SessionID)
    /// Tells `connection` why it is closed (a link-state reason), then closes it.
    func disconnect(_ connection: ConnectionID, reason: RtmLinkStateChangeReason, detail: String)
}
