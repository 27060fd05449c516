import SwitchboardCore

/// Who hears about which metadata: channel members that asked for `.metadata`, and sessions
/// subscribed to a user's metadata. It remembers, per listener, the revision it last got, so a
/// listener never gets an older set after a newer one, whatever order deliveries finish in.
struct StorageAudience: Sendable {
    private var listeners: [MetadataTarget: [SessionID: Int64]] = [:]
    private var targetsOfSession: [SessionID: Set<MetadataTarget>] = [:]

    /// Adds `session` as a listener of `target`. Returns false when it already was one.
    mutating func add(_ session: SessionID, to target: MetadataTarget) -> Bool {
        guard listeners[target]?[session] == nil else { return false }
        listeners[target, default: [:]][session] = -1
        targetsOfSession[session, default: []].insert(target)
        return true
    }

    /// Removes `session` as a listener of `target`. Returns false when it was none.
    mutating func remove(_ session: SessionID, from target: MetadataTarget) -> Bool {
        guard listeners[target]?.removeValue(forKey: session) != nil else { return false }
        if listeners[target]?.isEmpty == true { listeners[target] = nil }
        targetsOfSession[session]?.remove(target)
        if targetsOfSession[session]?.isEmpty == true { targetsOfSession[session] = nil }
        return true
    }

    /// Forgets every listening of `session`.
    mutating func removeAll(of session: SessionID) {
        for target in targetsOfSession[session] ?? [] { _ = remove(session, from: target) }
    }

    /// Whether `session` listens to `target`.
    func contains(_ session: SessionID, _ target: MetadataTarget) -> Bool { listeners[target]?[session] != nil }

    /// Whether anyone listens to `target`.
    func hasListeners(_ target: MetadataTarget) -> Bool { listeners[target] != nil }

    /// How many users' metadata `session` subscribes to.
    func userSubscriptions(of session: SessionID) -> Int {
        targetsOfSession[session]?.count { if case .user = $0 { true } else { false } } ?? 0
    }

    /// The listeners of `target` that have not yet got `revision` or later, in session order;
    /// they are marked as having got it.
    mutating func receivers(of target: MetadataTarget, revision: Int64) -> [SessionID] {
        guard var sessions = listeners[target] else { return [] }
        var due: [SessionID] = []
        for (session, last) in sessions where last < revision {
            due.append(session)
            sessions[session] = revision
        }
        listeners[target] = sessions
        return due.sorted()
    }

    /// Whether `session` listens to `target` and has not yet got `revision` or later; if so it
    /// is marked as having got it.
    mutating func takes(_ session: SessionID, _ target: MetadataTarget, revision: Int64) -> Bool {
        guard let last = listeners[target]?[session], last < revision else { return false }
        listeners[target]?[session] = revision
        return true
    }
}
