import Foundation
import SwitchboardCore

/// A publisher in a topic (`AgoraRtmPublisherInfo`).
public final class RtmPublisherInfo: NSObject, Sendable {
    /// The publisher's user id.
    public let publisherUserId: String
    /// The meta it joined the topic with.
    public let publisherMeta: String

    /// Creates the info.
    public init(publisherUserId: String, publisherMeta: String) {
        self.publisherUserId = publisherUserId
        self.publisherMeta = publisherMeta
    }
}

/// A topic and its publishers (`AgoraRtmTopicInfo`).
public final class RtmTopicInfo: NSObject, Sendable {
    /// The topic name.
    public let topic: String
    /// Its publishers.
    public let publishers: [RtmPublisherInfo]

    /// Creates the info.
    public init(topic: String, publishers: [RtmPublisherInfo]) {
        self.topic = topic
        self.publishers = publishers
    }
}

/// A topic event of a joined stream channel (`AgoraRtmTopicEvent`).
public final class RtmTopicEvent: NSObject, Sendable {
    /// Snapshot on join, a remote user joining or leaving a topic.
    public let type: RtmTopicEventType
    /// The stream channel.
    public let channelName: String
    /// The user the event is about.
    public let publisher: String
    /// The topics concerned, with their publishers.
    public let topicInfos: [RtmTopicInfo]
    /// Server time of the event, milliseconds since 1970.
    public let timestamp: UInt64

    /// Creates the event from the server's push.
    public init(_ event: TopicEvent) {
        type = event.type
        channelName = event.channelName
        publisher = event.publisher
        topicInfos = event.topicInfos.map { info in
            RtmTopicInfo(
                topic: info.topic,
                publishers: info.publishers.map { RtmPublisherInfo(publisherUserId: $0.userId, publisherMeta: $0.meta) })
        }
        timestamp = event.timestamp
    }
}
