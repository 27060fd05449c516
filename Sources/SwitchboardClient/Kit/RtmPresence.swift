import Foundation
import SwitchboardCore

/// The presence instance (`AgoraRtmPresence`): who is in a channel, where a user is, and the
/// temporary user states, for message channels and stream channels. Every call exists in the
/// reference's two forms, `async` and with a completion block.
public final class RtmPresence: NSObject, Sendable {
    private let kit: RtmClientKit

    init(kit: RtmClientKit) { self.kit = kit }

    // MARK: Who is in a channel

    /// The users in a channel, a page at a time (ids by default; states with `includeState`).
    public func getOnlineUsers(channelName: String, channelType: RtmChannelType, options: RtmGetOnlineUsersOptions?) async
        -> (RtmGetOnlineUsersResponse?, RtmErrorInfo?)
    {
        let (page, error) = await onlineUsers(channelName, channelType, options).result()
        return (page.map(RtmGetOnlineUsersResponse.init), error)
    }

    /// The users in a channel, calling `completionBlock` when done.
    public func getOnlineUsers(
        channelName: String, channelType: RtmChannelType, options: RtmGetOnlineUsersOptions?,
        completion completionBlock: RtmGetOnlineUsersBlock? = nil
    ) {
        onlineUsers(channelName, channelType, options).complete { page, error in
            completionBlock?(page.map(RtmGetOnlineUsersResponse.init), error)
        }
    }

    /// The users in a channel, a page at a time (the newer name of `getOnlineUsers`).
    public func whoNow(channelName: String, channelType: RtmChannelType, options: RtmPresenceOptions?) async
        -> (RtmWhoNowResponse?, RtmErrorInfo?)
    {
        await getOnlineUsers(channelName: channelName, channelType: channelType, options: options)
    }

    /// The users in a channel, calling `completionBlock` when done.
    public func whoNow(
        channelName: String, channelType: RtmChannelType, options: RtmPresenceOptions?,
        completion completionBlock: RtmWhoNowBlock? = nil
    ) {
        getOnlineUsers(channelName: channelName, channelType: channelType, options: options, completion: completionBlock)
    }

    // MARK: Where a user is

    /// The channels a user is in; channels it is in quietly are left out.
    public func getUserChannels(userId: String) async -> (RtmGetUserChannelsResponse?, RtmErrorInfo?) {
        let (channels, error) = await kit.whereNowCall(userId).result()
        return (channels.map(RtmGetUserChannelsResponse.init), error)
    }

    /// The channels a user is in, calling `completionBlock` when done.
    public func getUserChannels(userId: String, completion completionBlock: RtmGetUserChannelsBlock? = nil) {
        kit.whereNowCall(userId).complete { channels, error in
            completionBlock?(channels.map(RtmGetUserChannelsResponse.init), error)
        }
    }

    /// The channels a user is in (the newer name of `getUserChannels`).
    public func whereNow(userId: String) async -> (RtmWhereNowResponse?, RtmErrorInfo?) {
        await getUserChannels(userId: userId)
    }

    /// The channels a user is in, calling `completionBlock` when done.
    public func whereNow(userId: String, completion completionBlock: RtmWhereNowBlock? = nil) {
        getUserChannels(userId: userId, completion: completionBlock)
    }

    // MARK: Temporary states

    /// Sets keys of this user's state in a channel; other keys stay. In a channel not joined yet
    /// the state is kept and set on joining; after a reconnect that lost the session it is set again.
    public func setState(channelName: String, channelType: RtmChannelType, items: [String: String]) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        await kit.setStateCall(ChannelAddress(channelType, channelName), items: items).result()
    }

    /// Sets keys of this user's state, calling `completionBlock` when done.
    public func setState(
        channelName: String, channelType: RtmChannelType, items: [String: String],
        completion completionBlock: RtmOperationBlock? = nil
    ) {
        kit.setStateCall(ChannelAddress(channelType, channelName), items: items).complete(completionBlock)
    }

    /// A user's state in a channel.
    public func getState(channelName: String, channelType: RtmChannelType, userId: String) async
        -> (RtmPresenceGetStateResponse?, RtmErrorInfo?)
    {
        let (state, error) = await kit.getStateCall(ChannelAddress(channelType, channelName), userId: userId).result()
        return (state.map(RtmPresenceGetStateResponse.init), error)
    }

    /// A user's state in a channel, calling `completionBlock` when done.
    public func getState(
        channelName: String, channelType: RtmChannelType, userId: String,
        completion completionBlock: RtmPresenceGetStateBlock? = nil
    ) {
        kit.getStateCall(ChannelAddress(channelType, channelName), userId: userId).complete { state, error in
            completionBlock?(state.map(RtmPresenceGetStateResponse.init), error)
        }
    }

    /// Removes keys of this user's state in a channel; no keys removes them all.
    public func removeState(channelName: String, channelType: RtmChannelType, keys: [String]) async
        -> (RtmCommonResponse?, RtmErrorInfo?)
    {
        await kit.removeStateCall(ChannelAddress(channelType, channelName), keys: keys).result()
    }

    /// Removes keys of this user's state, calling `completionBlock` when done.
    public func removeState(
        channelName: String, channelType: RtmChannelType, keys: [String], completion completionBlock: RtmOperationBlock? = nil
    ) {
        kit.removeStateCall(ChannelAddress(channelType, channelName), keys: keys).complete(completionBlock)
    }

    // MARK: Users across devices (a Switchboard extension)

    /// Whether users are online on any device, and when each was last seen.
    public func getUserPresence(userIds: [String]) async -> (RtmGetUserPresenceResponse?, RtmErrorInfo?) {
        let (users, error) = await kit.userPresenceCall(userIds).result()
        return (users.map(RtmGetUserPresenceResponse.init), error)
    }

    /// Whether users are online, calling `completionBlock` when done.
    public func getUserPresence(userIds: [String], completion completionBlock: RtmGetUserPresenceBlock? = nil) {
        kit.userPresenceCall(userIds).complete { users, error in
            completionBlock?(users.map(RtmGetUserPresenceResponse.init), error)
        }
    }

    // MARK: Helpers

    private func onlineUsers(_ name: String, _ type: RtmChannelType, _ options: RtmGetOnlineUsersOptions?) -> RtmCall<WhoNowPage> {
        kit.whoNowCall(
            ChannelAddress(type, name), includeUserId: options?.includeUserId ?? true,
            includeState: options?.includeState ?? false, page: options?.page ?? "")
    }

}
