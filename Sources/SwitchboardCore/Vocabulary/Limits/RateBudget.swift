/// A per-client budget of calls per second that an operation draws on (the reference's call
/// limits): published messages, storage calls, lock acquires, and every other API call. Login,
/// logout and heartbeats draw on none. The server refuses a call past its budget with
/// `operationRateExceedLimitation` (-10021); the SDK paces what it sends by itself (a restore
/// after a lost session) within the same budgets.
public enum RateBudget: Int, Sendable, Hashable, CaseIterable {
    /// Messages published in message channels and to users.
    case publish
    /// Calls no other budget covers: subscribe, join, topics, presence, locks other than acquire.
    case other
    /// Metadata reads, writes and user-metadata subscriptions.
    case storage
    /// Lock acquires; each draws on `other` too.
    case lockAcquire

    /// The budgets a call of this one takes from: itself, and `other` for a lock acquire.
    public var drawn: [RateBudget] { alsoDrawn.map { [self, $0] } ?? [self] }

    /// The budget a call of this one takes from besides itself: `other` for a lock acquire, none
    /// for the rest (read on every publish: no array made).
    public var alsoDrawn: RateBudget? { self == .lockAcquire ? .other : nil }

    /// Calls per second `limits` allows; nil when unlimited.
    public func callsPerSecond(under limits: Limits) -> Int? {
        switch self {
        case .publish: limits.messages.publishesPerSecondPerClient
        case .other: limits.sessions.otherCallsPerSecondPerClient
        case .storage: limits.storage.callsPerSecondPerClient
        case .lockAcquire: limits.locks.acquiresPerSecondPerClient
        }
    }
}
