import Foundation
import SwitchboardCore

/// Options of `subscribe` (`AgoraRtmSubscribeOptions`).
public final class RtmSubscribeOptions: NSObject {
    /// Which event notifications to receive; `[.message, .presence]` by default.
    public var features: RtmSubscribeChannelFeature = .defaultFeatures
    /// Creates the defaults.
    public override init() {}
}

/// Options of `publish` (`AgoraRtmPublishOptions`).
public final class RtmPublishOptions: NSObject {
    /// `.message` (the default) to publish on a channel, `.user` to send to a user.
    public var channelType: RtmChannelType = .message
    /// A user-defined type, at most 32 characters.
    public var customType: String = ""
    /// Creates the defaults.
    public override init() {}
}
