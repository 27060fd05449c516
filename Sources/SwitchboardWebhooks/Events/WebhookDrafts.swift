import Foundation
import SwitchboardCore

/// An event before it has an id and a time: its type, app and fields.
public struct WebhookDraft: Sendable, Hashable {
    /// What happened.
    public var type: WebhookEventType
    /// The app it happened in.
    public var app: AppID
    /// The event's fields.
    public var fields: [WebhookField]
    /// Creates a draft.
    public init(_ type: WebhookEventType, app: AppID, _ fields: [WebhookField]) {
        self.type = type
        self.app = app
        self.fields = fields
    }
}

/// What each bus event becomes for the receivers: pure functions, one per kind of fact.
public enum WebhookDrafts {
    /// A user's first session started.
    public static func online(_ user: UserKey) -> WebhookDraft {
        WebhookDraft(.userOnline, app: user.app, [WebhookField("user", .string(user.userId))])
    }

    /// A user's last session ended, and why.
    public static func offline(_ user: UserKey, reason why: SessionEndReason) -> WebhookDraft {
        WebhookDraft(.userOffline, app: user.app, [WebhookField("user", .string(user.userId)), WebhookField("reason", .string(reason(why)))])
    }

    /// A user came online on the first node of the cluster, or went offline on the last.
    public static func acrossNodes(_ event: UserOnlineAcrossNodes) -> WebhookDraft {
        event.ended.map { offline(event.user, reason: $0) } ?? online(event.user)
    }

    /// A dead node's sessions timed out of their channels and lost their session-bound items when
    /// it was reaped: what that node would have sent, had they ended there. Each membership is a
    /// `channel.timeout`, followed by the channel's `channel.vacated` after its last one (the node
    /// has no member left anywhere); then each metadata change.
    public static func deadNode(_ event: DeadNodeSessionsEnded) -> [WebhookDraft] {
        let last = Dictionary(event.timedOut.enumerated().map { ($0.element.channel, $0.offset) }) { _, later in later }
        var drafts: [WebhookDraft] = []
        for (index, member) in event.timedOut.enumerated() {
            let channel = channelFields(member.channel)
            drafts.append(WebhookDraft(.channelTimeout, app: member.channel.app, channel + [WebhookField("user", .string(member.userId))]))
            if last[member.channel] == index { drafts.append(WebhookDraft(.channelVacated, app: member.channel.app, channel)) }
        }
        return drafts + event.metadata.map(metadata)
    }

    /// A membership changed; `channelEmpty` is whether the channel has no member now.
    /// A join (not a change of features) is `channel.joined`, after `channel.occupied` when it is
    /// the first member; a leave is `channel.left` (or `channel.timeout`), then `channel.vacated`
    /// when it was the last.
    public static func membership(_ change: MembershipChange, channelEmpty: Bool, firstMember: Bool) -> [WebhookDraft] {
        let app = change.channel.app
        let channel = channelFields(change.channel)
        let member = channel + [WebhookField("user", .string(change.member.userId))]
        if change.isJoin {
            return (firstMember ? [WebhookDraft(.channelOccupied, app: app, channel)] : []) + [WebhookDraft(.channelJoined, app: app, member)]
        }
        guard change.isLeave else { return [] }
        let leave: WebhookDraft
        switch change.reason {
        case .sessionClosed(.timedOut): leave = WebhookDraft(.channelTimeout, app: app, member)
        case .sessionClosed(let why): leave = WebhookDraft(.channelLeft, app: app, member + [WebhookField("reason", .string(reason(why)))])
        case .left, nil: leave = WebhookDraft(.channelLeft, app: app, member + [WebhookField("reason", .string("left"))])
        }
        return [leave] + (channelEmpty ? [WebhookDraft(.channelVacated, app: app, channel)] : [])
    }

    /// A member's state changed.
    public static func state(_ event: PresenceStateChanged) -> WebhookDraft {
        WebhookDraft(
            .presenceStateChanged, app: event.channel.app,
            channelFields(event.channel) + [WebhookField("user", .string(event.user.userId)), WebhookField("states", .strings(event.states))])
    }

    /// Metadata changed: a channel's or a user's, with its new revision.
    public static func metadata(_ event: MetadataChanged) -> WebhookDraft {
        let target: [WebhookField] =
            switch event.target {
            case .channel(let channel): [WebhookField("scope", .string("channel"))] + channelFields(channel)
            case .user(let user): [WebhookField("scope", .string("user")), WebhookField("user", .string(user.userId))]
            }
        return WebhookDraft(
            .metadataChanged, app: event.target.app,
            target + [
                WebhookField("revision", .integer(event.revision)), WebhookField("itemCount", .integer(Int64(event.itemCount))),
                WebhookField("author", .string(event.author)),
            ])
    }

    /// A lock was acquired, released, expired or revoked; nil for a lock set or removed.
    public static func lock(_ event: LockChanged) -> WebhookDraft? {
        let type: WebhookEventType
        switch event.change {
        case .acquired: type = .lockAcquired
        case .released: type = .lockReleased
        case .expired: type = .lockExpired
        case .revoked: type = .lockRevoked
        case .set, .removed: return nil
        }
        return WebhookDraft(
            type, app: event.channel.app,
            channelFields(event.channel) + [
                WebhookField("lock", .string(event.lock.lockName)), WebhookField("owner", .string(event.lock.owner)),
                WebhookField("fencingToken", .integer(Int64(truncatingIfNeeded: event.lock.fencingToken))),
            ])
    }

    /// A user-channel message found its receiver offline; `content` says whether the payload goes
    /// with it or only its size.
    public static func undelivered(_ event: UserMessageUndelivered, content: OfflineMessageContent) -> WebhookDraft {
        var fields = [
            WebhookField("from", .string(event.publisher.userId)), WebhookField("to", .string(event.receiver.userId)),
            WebhookField("customType", .string(event.delivery.customType)),
            WebhookField("payloadSize", .integer(Int64(event.delivery.payload.byteCount))),
        ]
        if content == .payload {
            switch event.delivery.payload {
            case .string(let text):
                fields += [WebhookField("payloadEncoding", .string("text")), WebhookField("payload", .string(text))]
            case .binary(let bytes):
                fields += [WebhookField("payloadEncoding", .string("base64")), WebhookField("payload", .string(Data(bytes).base64EncodedString()))]
            }
        }
        return WebhookDraft(.messageOffline, app: event.receiver.app, fields)
    }

    /// The words a delivery gives for why a session ended.
    public static func reason(_ reason: SessionEndReason) -> String {
        switch reason {
        case .logout: "logout"
        case .timedOut: "timeout"
        case .replacedBySameUser, .kickedByServer: "kicked"
        case .tokenExpired: "token_expired"
        case .serverShutdown: "server_shutdown"
        case .movedToAnotherNode: "moved"
        }
    }

    private static func channelFields(_ channel: ChannelKey) -> [WebhookField] {
        [WebhookField("channel", .string(channel.name)), WebhookField("channelType", .string(channel.type == .stream ? "stream" : "message"))]
    }
}
