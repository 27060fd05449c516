import SwitchboardCore
/// Receives the client's events (`AgoraRtmClientDelegate`). Every method has an empty default.
public protocol RtmClientDelegate: AnyObject {
    /// A message arrived on a subscribed channel or the user channel.
    func rtmKit(_ rtmKit: RtmClientKit, didReceiveMessageEvent event: RtmMessageEvent)
    /// The link state changed.
    func rtmKit(_ rtmKit: RtmClientKit, didReceiveLinkStateEvent event: RtmLinkStateEvent)
    /// The login token expires within 30 seconds; `channel` is nil for the login token.
    func rtmKit(_ rtmKit: RtmClientKit, tokenPrivilegeWillExpire channel: String?)
    /// An extension module of the server pushed something (a Switchboard extension).
    func rtmKit(_ rtmKit: RtmClientKit, didReceiveExtensionEvent event: RtmExtensionEvent)
    /// A topic event of a joined stream channel.
    func rtmKit(_ rtmKit: RtmClientKit, didReceiveTopicEvent event: RtmTopicEvent)
    /// Someone joined, left, timed out or changed state in a channel, or a snapshot or interval came.
    func rtmKit(_ rtmKit: RtmClientKit, didReceivePresenceEvent event: RtmPresenceEvent)
    /// Channel metadata of a subscribed channel, or user metadata of a subscribed user: a snapshot, or the whole set after a change.
    func rtmKit(_ rtmKit: RtmClientKit, didReceiveStorageEvent event: RtmStorageEvent)
    /// A lock of a channel subscribed or joined with the lock feature changed, or the snapshot on joining.
    func rtmKit(_ rtmKit: RtmClientKit, didReceiveLockEvent event: RtmLockEvent)
    /// Messages of `channel` (a subscribed message channel, or with `.user` the client's own user
    /// channel) published on other nodes of a cluster may not have reached this client: its
    /// server's link to them was down a while (a Switchboard extension).
    func rtmKit(_ rtmKit: RtmClientKit, messagesMayBeLostIn channel: String, channelType: RtmChannelType)
}

extension RtmClientDelegate {
    public func rtmKit(_ rtmKit: RtmClientKit, didReceiveMessageEvent event: RtmMessageEvent) {}
    public func rtmKit(_ rtmKit: RtmClientKit, didReceiveLinkStateEvent event: RtmLinkStateEvent) {}
    public func rtmKit(_ rtmKit: RtmClientKit, tokenPrivilegeWillExpire channel: String?) {}
    public func rtmKit(_ rtmKit: RtmClientKit, didReceiveExtensionEvent event: RtmExtensionEvent) {}
    public func rtmKit(_ rtmKit: RtmClientKit, didReceiveTopicEvent event: RtmTopicEvent) {}
    public func rtmKit(_ rtmKit: RtmClientKit, didReceivePresenceEvent event: RtmPresenceEvent) {}
    public func rtmKit(_ rtmKit: RtmClientKit, didReceiveStorageEvent event: RtmStorageEvent) {}
    public func rtmKit(_ rtmKit: RtmClientKit, didReceiveLockEvent event: RtmLockEvent) {}
    public func rtmKit(_ rtmKit: RtmClientKit, messagesMayBeLostIn channel: String, channelType: RtmChannelType) {}
}

/// Every event a client reports, for the `events` stream.
public enum RtmEvent: Sendable {
    /// A message arrived.
    case message(RtmMessageEvent)
    /// The link state changed.
    case linkState(RtmLinkStateEvent)
    /// The login token expires soon.
    case tokenPrivilegeWillExpire(channel: String?)
    /// An extension module pushed something.
    case `extension`(RtmExtensionEvent)
    /// A topic event of a joined stream channel.
    case topic(RtmTopicEvent)
    /// A presence event.
    case presence(RtmPresenceEvent)
    /// Channel or user metadata.
    case storage(RtmStorageEvent)
    /// A lock event.
    case lock(RtmLockEvent)
    /// Messages of a channel published on other nodes of a cluster may not have reached the client.
    case messagesMayBeLost(channelType: RtmChannelType, channelName: String)
}
