import Synchronization
import SwitchboardCore

/// An in-memory outbox that records what modules ask of it, keeping pushes per session.
public final class RecordingOutbox: Outbox {
    /// One recorded call other than `deliver`.
    public enum Call: Sendable, Hashable {
        case open(SessionID)
        case disconnect(SessionID, RtmLinkStateChangeReason)
        case release(SessionID)
    }

    private struct State {
        var calls: [Call] = []
        var delivered: [SessionID: [Push]] = [:]
        var receiverLists: [[SessionID]] = []
        var priorities: [SessionID: [RtmMessagePriority?]] = [:]
        var open: Set<SessionID> = []
    }

    private let state = Mutex(State())

    /// Creates an empty outbox.
    public init() {}

    public func open(_ session: SessionID) {
        state.withLock {
            $0.calls.append(.open(session))
            $0.open.insert(session)
        }
    }

    public func deliver(_ push: Push, to sessions: [SessionID]) {
        record(push, to: sessions, priority: nil)
    }

    public func deliver(_ push: Push, to sessions: [SessionID], priority: RtmMessagePriority) {
        record(push, to: sessions, priority: priority)
    }

    private func record(_ push: Push, to sessions: [SessionID], priority: RtmMessagePriority?) {
        state.withLock { state in
            state.receiverLists.append(sessions)
            for session in sessions {
                state.delivered[session, default: []].append(push)
                state.priorities[session, default: []].append(priority)
            }
        }
    }

    /// The receivers of each delivery, in the order the deliveries came and as each named them
    /// (a delivery to one session is a list of one).
    public var receiverLists: [[SessionID]] { state.withLock { $0.receiverLists } }

    /// The priority each push to `session` was delivered with (nil: none), in order.
    public func priorities(to session: SessionID) -> [RtmMessagePriority?] {
        state.withLock { $0.priorities[session] ?? [] }
    }

    public func disconnect(_ session: SessionID, reason: RtmLinkStateChangeReason, detail: String) {
        state.withLock { $0.calls.append(.disconnect(session, reason)) }
    }

    public func release(_ session: SessionID) {
        state.withLock {
            $0.calls.append(.release(session))
            $0.open.remove(session)
        }
    }

    /// Every call other than `deliver`, in order.
    public var calls: [Call] { state.withLock { $0.calls } }

    /// The pushes delivered to `session`, in order.
    public func pushes(to session: SessionID) -> [Push] { state.withLock { $0.delivered[session] ?? [] } }

    /// The messages delivered to `session`, in order.
    public func messages(to session: SessionID) -> [MessageDelivery] {
        pushes(to: session).compactMap { if case .message(let message) = $0 { message } else { nil } }
    }

    /// Whether `session` was opened and not yet released.
    public func isOpen(_ session: SessionID) -> Bool { state.withLock { $0.open.contains(session) } }
}
