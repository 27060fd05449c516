import SwitchboardCore
import SwitchboardRedis

/// What a node listens to on Redis for its own listeners: a message channel's or a user's
/// messages, the changes of a metadata set, of a channel's locks or of its presence, or a stream
/// channel's topic changes and messages.
enum Listened: Hashable, Sendable, CustomStringConvertible {
    /// Messages published to a message channel or a user on other nodes.
    case messages(RelayTarget)
    /// Changes other nodes commit to a metadata set.
    case metadata(MetadataTarget)
    /// Changes of a channel's locks, wherever they are made.
    case locks(ChannelKey)
    /// Changes of a channel's presence, wherever they are made.
    case presence(ChannelKey)
    /// A stream channel's topic changes and topic messages, wherever they are made.
    case topics(ChannelKey)

    /// The Redis channel it comes on.
    var channel: RedisChannel {
        switch self {
        case .messages(let target): RelayChannels.channel(of: target)
        case .metadata(let target): MetadataKeys(target).channel
        case .locks(let channel): LockKeys(channel).events
        case .presence(let channel): PresenceKeys(channel).events
        case .topics(let channel): TopicKeys(channel).events
        }
    }

    /// The code a listen that failed answers with: the asking operation's timeout.
    var timeoutCode: RtmErrorCode {
        switch self {
        case .messages(.channel): .channelSubscribeTimeout
        case .messages(.user): .loginTimeout
        case .metadata: .storageOperationTimeout
        case .locks: .lockOperationTimeout
        case .presence: .presenceNotConnected
        case .topics: .channelJoinFailed
        }
    }

    var description: String {
        switch self {
        case .messages(let target): "\(target)"
        case .metadata(let target): "metadata of \(target)"
        case .locks(let channel): "locks of \(channel)"
        case .presence(let channel): "presence of \(channel)"
        case .topics(let channel): "topics of \(channel)"
        }
    }
}
