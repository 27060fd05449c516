/// A bounded memory of sessions that have ended, so that a request racing its session's
/// `SessionClosed` is refused instead of leaving state behind.
///
/// Session ids are never reused, so remembering the most recent `capacity` endings suffices:
/// a request still in flight for a session ended that long ago does not exist in practice.
/// Recording and asking are O(1): a set for lookups and a ring buffer for the eviction order.
public final class EndedSessions: Sendable {
    private struct Memory {
        var members = Set<SessionID>()
        var ring: [SessionID] = []
        var next = 0
    }

    /// How many endings are remembered.
    public let capacity: Int
    private let memory = PortableMutex(Memory())

    /// An empty memory of `capacity` endings (at least 1).
    public init(capacity: Int = 65_536) {
        self.capacity = max(1, capacity)
    }

    /// Remembers that `session` ended, forgetting the oldest ending when full.
    public func record(_ session: SessionID) {
        memory.withLock { memory in
            guard memory.members.insert(session).inserted else { return }
            if memory.ring.count < capacity {
                memory.ring.append(session)
            } else {
                memory.members.remove(memory.ring[memory.next])
                memory.ring[memory.next] = session
                memory.next = (memory.next + 1) % capacity
            }
        }
    }

    /// Forgets that `session` ended: it was opened here again (a session taken over from another
    /// node that had once been this node's).
    public func forget(_ session: SessionID) {
        // Its slot in the ring stays: when it comes round, removing it again changes nothing (or
        // forgets a later ending of the same session a little early).
        _ = memory.withLock { $0.members.remove(session) }
    }

    /// Whether `session` is known to have ended.
    public func contains(_ session: SessionID) -> Bool {
        memory.withLock { $0.members.contains(session) }
    }

    /// How many endings are remembered now.
    public var count: Int { memory.withLock { $0.members.count } }
}

extension BusSubscription {
    /// Adds `SessionClosed` to this subscription: each ending is recorded in `ended` first, then
    /// `handler` runs, in order with the subscription's other events.
    ///
    /// The rule for a module with per-session state: check `ended.contains(caller.session)` in
    /// every request that adds state for a session, before any suspension point, and drop that
    /// state in `handler`. Either the check sees the ending, or the handler runs after the request.
    @discardableResult
    public func onSessionEnd(
        recordingIn ended: EndedSessions, _ handler: @escaping @Sendable (SessionClosed) async -> Void
    ) -> BusSubscription {
        // A session opened here again (taken over from another node) is no longer ended.
        bus?.observe(SessionOpened.self) { event in ended.forget(event.caller.session) }
        return on(SessionClosed.self) { event in
            ended.record(event.session)
            await handler(event)
        }
    }
}

extension ModuleContext {
    /// Calls `handler` for every session that ends, after recording it in the returned memory,
    /// on a subscription of its own (see `BusSubscription.onSessionEnd` for the rule).
    public func onSessionEnd(
        capacity: Int = 65_536, _ handler: @escaping @Sendable (SessionClosed) async -> Void
    ) -> EndedSessions {
        let ended = EndedSessions(capacity: capacity)
        bus.subscription().onSessionEnd(recordingIn: ended, handler)
        return ended
    }
}
