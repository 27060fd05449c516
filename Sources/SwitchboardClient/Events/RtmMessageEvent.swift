import Foundation
import SwitchboardCore

/// A message body (`AgoraRtmMessage`): exactly one of `stringData` and `rawData` is set.
public final class RtmMessage: NSObject, Sendable {
    /// The binary body, for a binary message.
    public let rawData: Data?
    /// The string body, for a string message.
    public let stringData: String?

    /// Wraps a payload.
    public init(_ payload: MessagePayload) {
        switch payload {
        case .string(let text):
            stringData = text
            rawData = nil
        case .binary(let bytes):
            stringData = nil
            rawData = Data(bytes)
        }
    }

    public override var description: String { stringData ?? "<\(rawData?.count ?? 0) bytes>" }
}

/// A message received on a subscribed channel or the user channel (`AgoraRtmMessageEvent`).
public final class RtmMessageEvent: NSObject, Sendable {
    /// The channel type.
    public let channelType: RtmChannelType
    /// The channel name; for a user channel, the sender's user id.
    public let channelName: String
    /// The topic; empty outside stream channels.
    public let channelTopic: String
    /// The message as sent.
    public let message: RtmMessage
    /// The sender's user id.
    public let publisher: String
    /// The user-defined type.
    public let customType: String
    /// Server time of publication, milliseconds since 1970.
    public let timestamp: UInt64

    /// Creates an event from a delivery.
    public init(_ delivery: MessageDelivery) {
        channelType = delivery.channelType
        channelName = delivery.channelName
        channelTopic = delivery.channelTopic
        message = RtmMessage(delivery.payload)
        publisher = delivery.publisher
        customType = delivery.customType
        timestamp = delivery.timestamp
    }
}
