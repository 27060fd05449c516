import SwitchboardCore

/// Who subscribes to which user's metadata, and which revision of each set every listener last
/// got, so a listener never gets an older set after a newer one, whatever order deliveries finish
/// in. Who hears a channel's metadata is not kept here: it is the channel's members with the
/// `.metadata` feature, in the module's `ChannelMembership`.
struct StorageAudience: Sendable {
    private var subscribers: [UserKey: Set<SessionID>] = [:]
    private var subscriptions: [SessionID: Set<UserKey>] = [:]
    /// The revision each session last got of each target, while it listens to it.
    private var delivered: [SessionID: [MetadataTarget: Int64]] = [:]

    // MARK: User metadata subscriptions

    /// Subscribes `session` to `user`'s metadata. Returns false when it already was.
    mutating func subscribe(_ session: SessionID, to user: UserKey) -> Bool {
        guard subscribers[user, default: []].insert(session).inserted else { return false }
        subscriptions[session, default: []].insert(user)
        return true
    }

    /// Unsubscribes `session` from `user`'s metadata. Returns false when it was not subscribed.
    mutating func unsubscribe(_ session: SessionID, from user: UserKey) -> Bool {
        guard subscribers[user]?.remove(session) != nil else { return false }
        if subscribers[user]?.isEmpty == true { subscribers[user] = nil }
        subscriptions[session]?.remove(user)
        if subscriptions[session]?.isEmpty == true { subscriptions[session] = nil }
        forget(session, .user(user))
        return true
    }

    /// Whether `session` subscribes to `user`'s metadata.
    func isSubscribed(_ session: SessionID, to user: UserKey) -> Bool { subscribers[user]?.contains(session) ?? false }

    /// How many users' metadata `session` subscribes to.
    func userSubscriptions(of session: SessionID) -> Int { subscriptions[session]?.count ?? 0 }

    /// The sessions subscribed to `user`'s metadata, in session order.
    func subscribers(of user: UserKey) -> [SessionID] { (subscribers[user] ?? []).sorted() }

    // MARK: Revisions delivered

    /// Of `listeners` of `target`, those that have not yet got `revision` or later, in the order
    /// given; they are marked as having got it.
    mutating func due(_ listeners: [SessionID], _ target: MetadataTarget, revision: Int64) -> [SessionID] {
        listeners.filter { session in
            guard delivered[session]?[target] ?? -1 < revision else { return false }
            delivered[session, default: [:]][target] = revision
            return true
        }
    }

    /// Of `listeners` of `target`, those that got revision `revision - 1` or have had nothing of
    /// it yet, in the order given; they are marked as having got `revision`. A listener further
    /// behind is left for the changes in between to reach it first (they are on their way).
    mutating func dueNext(_ listeners: [SessionID], _ target: MetadataTarget, revision: Int64) -> [SessionID] {
        due(listeners.filter { (delivered[$0]?[target] ?? revision - 1) >= revision - 1 }, target, revision: revision)
    }

    /// `session` no longer listens to `target`: a later listening starts afresh.
    mutating func forget(_ session: SessionID, _ target: MetadataTarget) {
        delivered[session]?[target] = nil
        if delivered[session]?.isEmpty == true { delivered[session] = nil }
    }

    /// `session` ended: it listens to nothing any more. Returns the users whose metadata it
    /// subscribed to.
    mutating func removeAll(of session: SessionID) -> [UserKey] {
        let users = subscriptions[session].map { Array($0) } ?? []
        for user in users { _ = unsubscribe(session, from: user) }
        delivered[session] = nil
        return users
    }
}
