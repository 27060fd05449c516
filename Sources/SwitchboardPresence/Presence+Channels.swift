import SwitchboardCore

/// The server's view of channels in use: the channel list of its API (every node's, over a store
/// shared by nodes) and the counts of its metrics (this node's), read from the membership every
/// presence question already rests on.
extension Presence {
    func listChannels(_ request: ListChannels) async throws(RtmError) -> ChannelPage {
        let operation = ListChannels.operation
        let (_, members) = try running(operation)
        guard request.channelType == nil || request.channelType == .message || request.channelType == .stream else {
            throw RtmError(.invalidChannelType, operation: operation, reason: "channels are listed for message and stream channels")
        }
        guard request.limit > 0 else {
            throw RtmError(.invalidParameter, operation: operation, reason: "limit is \(request.limit); at least 1")
        }
        let app = request.caller.app
        // A store shared by nodes lists every node's channels; a store of one node, this roster's.
        var summaries: [ChannelSummary]
        if let shared = try await store.channelSummaries(in: app) {
            summaries = shared.filter { (request.channelType == nil || $0.channel.type == request.channelType) && request.pattern.matches($0.channel.name) }
        } else {
            summaries = members.read { roster in
                roster.channels(in: app, type: request.channelType, matching: request.pattern).map { channel in
                    ChannelSummary(channel: channel.address, members: roster.memberCount(of: channel), users: roster.userCount(of: channel))
                }
            }
        }
        if let after = request.after { summaries.removeAll { !Self.precedes(after, $0.channel) } }
        summaries.sort { Self.precedes($0.channel, $1.channel) }
        let page = Array(summaries.prefix(request.limit))
        return ChannelPage(channels: page, next: summaries.count > request.limit ? page.last?.channel : nil)
    }

    func statistics(_ request: PresenceStatistics) throws(RtmError) -> [RtmChannelType: MembershipCount] {
        try running(PresenceStatistics.operation).1.read { $0.counts(in: request.app) }
    }

    /// The order of a channel list: by channel type, then name.
    private static func precedes(_ a: ChannelAddress, _ b: ChannelAddress) -> Bool {
        (a.type.rawValue, a.name) < (b.type.rawValue, b.name)
    }
}
