import Synchronization
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// The server's `Outbox`: encodes each push once and queues the same frame to every live
/// receiving connection; numbers every session's pushes and keeps the recent ones, so a client
/// that resumes gets again what it did not receive — while it was detached, and on a connection
/// that died before the server noticed.
///
/// Lock order: this outbox's lock, then a link's lock; a link never calls back into the outbox.
final class ServerOutbox: Outbox {
    /// A session's delivery state. A class, so the fan-out changes its history in place through
    /// one dictionary read per receiver; it never leaves the outbox's lock.
    private final class Outlet {
        /// The connection the session's pushes go to; nil while detached.
        var link: ClientLink?
        var history: PushHistory<OutboundFrame>

        init(history: PushHistory<OutboundFrame>) { self.history = history }
    }

    private struct State {
        var links: [ConnectionID: ClientLink] = [:]
        var outlets: [SessionID: Outlet] = [:]
        var sessionOnConnection: [ConnectionID: SessionID] = [:]
    }

    private let state = Mutex(State())
    /// What a session with a connection keeps: enough for the pushes a dead connection may have
    /// swallowed before the server noticed.
    private let liveBounds: PushHistory<OutboundFrame>.Bounds
    /// What a detached session keeps: the resume bound.
    private let detachedBounds: PushHistory<OutboundFrame>.Bounds

    init(limits: Limits) {
        detachedBounds = .init(frames: limits.resumeBufferMaxMessages, bytes: limits.resumeBufferMaxBytes)
        liveBounds = .init(
            frames: min(limits.resumeReplayMaxMessages, limits.resumeBufferMaxMessages),
            bytes: min(limits.resumeReplayMaxBytes, limits.resumeBufferMaxBytes))
    }

    // MARK: Connections (called by the connection hub)

    /// A connection opened: pushes for a session attached to it go to `link`.
    func register(_ link: ClientLink) {
        state.withLock { $0.links[link.id] = link }
    }

    /// A connection closed. Its session, if any, is detached at once so nothing sent from now on
    /// is lost; returns that session.
    func connectionClosed(_ connection: ConnectionID) -> SessionID? {
        state.withLock { state in
            state.links[connection] = nil
            guard let session = state.sessionOnConnection.removeValue(forKey: connection) else { return nil }
            if let outlet = state.outlets[session], outlet.link?.id == connection {
                outlet.link = nil
                outlet.history.rebound(detachedBounds)
            }
            return session
        }
    }

    /// How many connections are open.
    var connectionCount: Int { state.withLock { $0.links.count } }

    /// Every open connection.
    var allLinks: [ClientLink] { state.withLock { Array($0.links.values) } }

    // MARK: Outbox

    func deliver(_ push: Push, to sessions: [SessionID]) {
        guard !sessions.isEmpty else { return }
        let frame = OutboundFrame.binary(Wire.encodePush(push))
        let size = push.approximateSize
        let channel = push.channel
        state.withLock { state in
            for session in sessions {
                guard let outlet = state.outlets[session] else { continue }
                outlet.history.record(frame, size: size, channel: channel)
                outlet.link?.send(frame)
            }
        }
    }

    func attach(_ session: SessionID, to connection: ConnectionID, received: UInt64) -> ResumeLoss {
        state.withLock { state in
            let outlet = state.outlets[session] ?? Outlet(history: PushHistory(bounds: liveBounds))
            let (missed, loss) = outlet.history.unreceived(after: received)
            if let link = state.links[connection] {
                for frame in missed { link.send(frame) }
                outlet.link = link
                outlet.history.rebound(liveBounds)
                state.sessionOnConnection[connection] = session
            } else {
                outlet.link = nil
                outlet.history.rebound(detachedBounds)
            }
            state.outlets[session] = outlet
            return loss
        }
    }

    func detach(_ session: SessionID) {
        state.withLock { state in
            guard let outlet = state.outlets[session], let link = outlet.link else { return }
            state.sessionOnConnection[link.id] = nil
            outlet.link = nil
            outlet.history.rebound(detachedBounds)
        }
    }

    func release(_ session: SessionID) {
        state.withLock { state in
            if let link = state.outlets.removeValue(forKey: session)?.link {
                state.sessionOnConnection[link.id] = nil
            }
        }
    }

    func disconnect(_ connection: ConnectionID, reason: RtmLinkStateChangeReason, detail: String) {
        let link = state.withLock { state -> ClientLink? in
            state.sessionOnConnection[connection] = nil
            return state.links[connection]
        }
        link?.closeAfterTelling(reason: reason, detail: detail)
    }
}
