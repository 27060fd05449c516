/// What a member of a channel asked to hear, the same for message channels (subscribed with
/// `RtmSubscribeChannelFeature`) and stream channels (joined with `RtmJoinChannelFeature`), whose
/// reference bit layouts differ. Modules read this; only the edge converts.
public struct ChannelFeatures: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Presence events.
    public static let presence = ChannelFeatures(rawValue: 1)
    /// Storage (metadata) events.
    public static let metadata = ChannelFeatures(rawValue: 1 << 1)
    /// Messages (message channels; stream channels deliver by topic subscription instead).
    public static let message = ChannelFeatures(rawValue: 1 << 2)
    /// Lock events.
    public static let lock = ChannelFeatures(rawValue: 1 << 3)
    /// Quiet mode: the member hears others, but its own presence is not shown.
    public static let beQuiet = ChannelFeatures(rawValue: 1 << 4)

    /// The features of a message-channel subscription.
    public init(_ features: RtmSubscribeChannelFeature) {
        self.init(rawValue: UInt8(truncatingIfNeeded: features.rawValue & 0x1F))
    }

    /// The features of a stream-channel join.
    public init(_ features: RtmJoinChannelFeature) {
        var result: ChannelFeatures = []
        if features.contains(.presence) { result.insert(.presence) }
        if features.contains(.metadata) { result.insert(.metadata) }
        if features.contains(.lock) { result.insert(.lock) }
        if features.contains(.beQuiet) { result.insert(.beQuiet) }
        self = result
    }
}
