import SwitchboardCore

/// Which users are online, on any number of sessions, and when offline users were last seen.
///
/// Offline users are remembered up to `capacity`, the oldest forgotten first, so the memory is
/// bounded however many users come and go.
struct UserSightings: Sendable {
    /// For each online user, its sessions (a compact set: a user nearly always has one).
    private var online: [UserKey: CompactSet<SessionID>] = [:]
    /// When the sessions waiting for a resume lost their connection.
    private var lostAt: [SessionID: WallClockTime] = [:]
    private var lastSeen: [UserKey: WallClockTime] = [:]
    private var ring: [UserKey] = []
    private var next = 0
    /// How many offline users are remembered.
    let capacity: Int

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Records a moment of `caller`'s session at `at`.
    mutating func record(_ sighting: Sighting, of caller: Caller, at: WallClockTime) {
        let user = caller.user
        switch sighting {
        case .opened, .resumed:
            online[user, default: []].insert(caller.session)
            lostAt[caller.session] = nil
        case .suspended:
            guard online[user]?.contains(caller.session) == true else { return }
            lostAt[caller.session] = at
        case .closed:
            guard online[user]?.contains(caller.session) == true else { return }
            online.remove(caller.session, fromSetAt: user)
            lostAt[caller.session] = nil
            if online[user] == nil { remember(user, at: at) }
        }
    }

    /// The presence of `user` as of `now`.
    func presence(of user: UserKey, now: WallClockTime) -> UserPresence {
        guard let sessions = online[user] else {
            return UserPresence(userId: user.userId, online: false, lastSeen: lastSeen[user]?.millisecondsSince1970 ?? 0)
        }
        let connected = sessions.contains { lostAt[$0] == nil }
        let lastLost = sessions.compactMap { lostAt[$0] }.max() ?? now
        return UserPresence(userId: user.userId, online: true, lastSeen: (connected ? now : lastLost).millisecondsSince1970)
    }

    private mutating func remember(_ user: UserKey, at: WallClockTime) {
        if lastSeen.updateValue(at, forKey: user) != nil { return }
        if ring.count < capacity {
            ring.append(user)
        } else {
            lastSeen[ring[next]] = nil
            ring[next] = user
            next = (next + 1) % capacity
        }
    }
}
