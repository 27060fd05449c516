import Synchronization
import SwitchboardCore

/// The built-in presence store: everything in this process's memory, for one node.
public final class InMemoryPresenceStore: PresenceStore {
    private let table: Mutex<PresenceTable>

    /// An empty store that remembers the last-seen time of up to `lastSeenCapacity` offline users.
    public init(lastSeenCapacity: Int = 100_000) {
        table = Mutex(PresenceTable(lastSeenCapacity: lastSeenCapacity))
    }

    public func join(_ member: Caller, _ channel: ChannelKey, features: ChannelFeatures) async throws(RtmError) -> MemberChange {
        table.withLock { $0.join(member, channel, features: features) }
    }

    public func leave(_ member: Caller, _ channel: ChannelKey) async throws(RtmError) -> MemberChange? {
        table.withLock { $0.leave(member, channel) }
    }

    public func setState(
        of user: UserKey, in channel: ChannelKey, items: [StateItem], limits: Limits
    ) async throws(RtmError) -> StateChange {
        try table.withLock { table throws(RtmError) in try table.setState(of: user, in: channel, items: items, limits: limits) }
    }

    public func removeState(of user: UserKey, in channel: ChannelKey, keys: [String]) async throws(RtmError) -> StateChange {
        try table.withLock { table throws(RtmError) in try table.removeState(of: user, in: channel, keys: keys) }
    }

    public func state(of user: UserKey, in channel: ChannelKey) async throws(RtmError) -> MemberState? {
        table.withLock { $0.state(of: user, in: channel) }
    }

    public func members(
        of channel: ChannelKey, after cursor: UInt64, limit: Int, budget: Int, withStates: Bool
    ) async throws(RtmError) -> MemberPage {
        table.withLock { $0.members(of: channel, after: cursor, limit: limit, budget: budget, withStates: withStates) }
    }

    public func occupancy(of channel: ChannelKey) async throws(RtmError) -> Int {
        table.withLock { $0.occupancy(of: channel) }
    }

    public func listeners(of channel: ChannelKey) async throws(RtmError) -> [SessionID] {
        table.withLock { $0.listeners(of: channel) }
    }

    public func visibleChannels(of user: UserKey) async throws(RtmError) -> [ChannelKey] {
        table.withLock { $0.visibleChannels(of: user) }
    }

    public func record(_ sighting: Sighting, of session: Caller, at: WallClockTime) async throws(RtmError) {
        table.withLock { $0.record(sighting, of: session, at: at) }
    }

    public func presence(of users: [UserKey], now: WallClockTime) async throws(RtmError) -> [UserPresence] {
        table.withLock { $0.presence(of: users, now: now) }
    }
}
