import SwitchboardCore

/// The server's view of channels in use: the channel list of its API and the counts of its
/// metrics, read from the membership every presence question already rests on.
extension Presence {
    func listChannels(_ request: ListChannels) throws(RtmError) -> ChannelPage {
        let operation = ListChannels.operation
        let (_, members) = try running(operation)
        guard request.channelType == nil || request.channelType == .message || request.channelType == .stream else {
            throw RtmError(.invalidChannelType, operation: operation, reason: "channels are listed for message and stream channels")
        }
        guard request.limit > 0 else {
            throw RtmError(.invalidParameter, operation: operation, reason: "limit is \(request.limit); at least 1")
        }
        let app = request.caller.app
        return members.read { roster in
            var keys = roster.channels(in: app, type: request.channelType, matching: request.pattern).map(\.address)
            if let after = request.after { keys.removeAll { !Self.precedes(after, $0) } }
            keys.sort(by: Self.precedes)
            let page = keys.prefix(request.limit).map { address in
                let channel = ChannelKey(app: app, address)
                return ChannelSummary(channel: address, members: roster.memberCount(of: channel), users: roster.userCount(of: channel))
            }
            return ChannelPage(channels: page, next: keys.count > request.limit ? page.last?.channel : nil)
        }
    }

    func statistics(_ request: PresenceStatistics) throws(RtmError) -> [RtmChannelType: MembershipCount] {
        try running(PresenceStatistics.operation).1.read { $0.counts(in: request.app) }
    }

    /// The order of a channel list: by channel type, then name.
    private static func precedes(_ a: ChannelAddress, _ b: ChannelAddress) -> Bool {
        (a.type.rawValue, a.name) < (b.type.rawValue, b.name)
    }
}
