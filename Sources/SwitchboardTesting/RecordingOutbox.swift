import Synchronization
import SwitchboardCore

/// An in-memory outbox that records what modules ask of it, keeping pushes per session.
///
/// Like the server's outbox it keeps pushes for detached sessions (unbounded here) and hands them
/// over on `attach`.
public final class RecordingOutbox: Outbox {
    /// One recorded call.
    public enum Call: Sendable, Hashable {
        case attach(SessionID, ConnectionID)
        case detach(SessionID)
        case release(SessionID)
        case disconnect(ConnectionID, RtmLinkStateChangeReason)
    }

    private struct State {
        var calls: [Call] = []
        var delivered: [SessionID: [Push]] = [:]
        var attached: [SessionID: ConnectionID] = [:]
    }

    private let state = Mutex(State())

    /// Creates an empty outbox.
    public init() {}

    public func deliver(_ push: Push, to sessions: [SessionID]) {
        state.withLock { state in
            for session in sessions { state.delivered[session, default: []].append(push) }
        }
    }

    public func attach(_ session: SessionID, to connection: ConnectionID, received: UInt64) -> ResumeLoss {
        state.withLock {
            $0.calls.append(.attach(session, connection))
            $0.attached[session] = connection
        }
        return .none
    }

    public func detach(_ session: SessionID) {
        state.withLock {
            $0.calls.append(.detach(session))
            $0.attached[session] = nil
        }
    }

    public func release(_ session: SessionID) {
        state.withLock {
            $0.calls.append(.release(session))
            $0.attached[session] = nil
        }
    }

    public func disconnect(_ connection: ConnectionID, reason: RtmLinkStateChangeReason, detail: String) {
        state.withLock { $0.calls.append(.disconnect(connection, reason)) }
    }

    /// Every call other than `deliver`, in order.
    public var calls: [Call] { state.withLock { $0.calls } }

    /// The pushes delivered to `session`, in order.
    public func pushes(to session: SessionID) -> [Push] { state.withLock { $0.delivered[session] ?? [] } }

    /// The messages delivered to `session`, in order.
    public func messages(to session: SessionID) -> [MessageDelivery] {
        pushes(to: session).compactMap { if case .message(let message) = $0 { message } else { nil } }
    }

    /// The connection a session is attached to, if any.
    public func connection(of session: SessionID) -> ConnectionID? { state.withLock { $0.attached[session] } }
}
