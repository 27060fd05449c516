/// The sessions each user has, per app, and how many users of each app are online: the one model
/// of "which sessions does this user have" every module keeps, as a pure value.
public struct UserSessions: Sendable {
    /// A compact set: a user nearly always has one session.
    private var users: [UserKey: CompactSet<SessionID>] = [:]
    private var onlineUsers: [AppID: Int] = [:]
    /// How many sessions each app has; apps with none are left out.
    public private(set) var sessionsByApp: [AppID: Int] = [:]
    /// Counts the changes: any session opened or closed since a reading makes it another
    /// (from 1, so that 0 is never one; see `ReceiverMemo`).
    public private(set) var generation: UInt64 = 1

    /// Nobody is online.
    public init() {}

    /// `caller`'s session started. Returns true when it is the user's first.
    @discardableResult
    public mutating func open(_ caller: Caller) -> Bool {
        let first = users[caller.user] == nil
        guard users[caller.user, default: []].insert(caller.session) else { return false }
        generation += 1
        sessionsByApp[caller.app, default: 0] += 1
        if first { onlineUsers[caller.app, default: 0] += 1 }
        return first
    }

    /// `caller`'s session ended. Returns true when it was the user's last.
    @discardableResult
    public mutating func close(_ caller: Caller) -> Bool {
        guard users[caller.user]?.contains(caller.session) == true else { return false }
        users.remove(caller.session, fromSetAt: caller.user)
        generation += 1
        sessionsByApp[caller.app, default: 1] -= 1
        if sessionsByApp[caller.app] == 0 { sessionsByApp[caller.app] = nil }
        guard users[caller.user] == nil else { return false }
        onlineUsers[caller.app, default: 1] -= 1
        if onlineUsers[caller.app] == 0 { onlineUsers[caller.app] = nil }
        return true
    }

    /// The sessions of `user` (nearly always one, held without an allocation).
    public func sessions(of user: UserKey) -> CompactSet<SessionID> { users[user] ?? [] }

    /// Whether `user` has a session.
    public func isOnline(_ user: UserKey) -> Bool { users[user] != nil }

    /// How many users of `app` have a session.
    public func onlineUserCount(in app: AppID) -> Int { onlineUsers[app] ?? 0 }
}
