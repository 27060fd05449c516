import Synchronization
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// The one owner of which session is on which connection: every open link, the session bound to
/// it, and each session's outlet (the link its pushes go to and its numbered push history).
///
/// It is the server's `Outbox`: a push is encoded once and the same frame is queued to every live
/// receiving connection, and recorded in each session's history so a client that resumes gets
/// again what it did not receive. Binding a session to a link writes the login answer and the
/// pushes the client missed under the same lock that delivers pushes, so nothing overtakes them.
///
/// Lock order: this registry's lock, then a socket's; a link never calls back into the registry.
final class SessionRegistry: Outbox {
    /// A session's delivery state. A class, so the fan-out changes its history in place through
    /// one dictionary read per receiver; it never leaves the registry's lock.
    private final class Outlet {
        /// The connection the session's pushes go to; nil while detached.
        var link: ClientLink?
        var history: PushHistory<OutboundFrame>

        init(history: PushHistory<OutboundFrame>) { self.history = history }
    }

    private struct Entry {
        let link: ClientLink
        /// The session this link carries, once bound.
        var caller: Caller?
        /// The socket closed; the entry stays until the link's request loop has drained.
        var closed = false
    }

    private struct State {
        var links: [ConnectionID: Entry] = [:]
        var outlets: [SessionID: Outlet] = [:]
    }

    /// Why a session could not be bound to a link.
    enum BindFailure: Error {
        /// The link closed while the login was answered.
        case linkClosed
        /// The session ended while the login was answered (another login replaced it).
        case sessionEnded
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

    // MARK: Links (called by the connection hub and the dispatcher)

    /// A connection opened.
    func opened(_ link: ClientLink) {
        state.withLock { $0.links[link.id] = Entry(link: link) }
    }

    /// The socket closed: its session, if any, is detached at once so nothing sent from now on is
    /// lost. The link keeps its caller until `remove`, so requests it had already received are
    /// still answered.
    func closed(_ link: ClientLink) {
        state.withLock { state in
            guard var entry = state.links[link.id] else { return }
            entry.closed = true
            state.links[link.id] = entry
            if let session = entry.caller?.session, let outlet = state.outlets[session], outlet.link === link {
                outlet.link = nil
                outlet.history.rebound(detachedBounds)
            }
        }
    }

    /// Forgets a closed link whose requests are all answered. Returns the session it still carried,
    /// which has lost its connection (nil when the session has moved to another link meanwhile).
    func remove(_ link: ClientLink) -> SessionID? {
        state.withLock { state in
            guard let session = state.links.removeValue(forKey: link.id)?.caller?.session,
                let outlet = state.outlets[session], outlet.link == nil || outlet.link === link
            else { return nil }
            return session
        }
    }

    /// The session `link` carries, if it is logged in.
    func caller(on link: ClientLink) -> Caller? {
        state.withLock { $0.links[link.id]?.caller }
    }

    /// Binds the session of `grant` to `link`: writes the login answer (`answer`, given what a
    /// resume lost), then the pushes numbered after `received`, and from then on the session's
    /// pushes go to `link`. A link that carried the session before is unbound and returned, for
    /// the caller to close as stale.
    func bind(
        _ grant: LoginGranted, to link: ClientLink, received: UInt64, answer: (ResumeLoss) -> ServerFrame
    ) throws(BindFailure) -> ClientLink? {
        try state.withLock { state throws(BindFailure) -> ClientLink? in
            guard var entry = state.links[link.id], !entry.closed else { throw .linkClosed }
            guard let outlet = state.outlets[grant.session] else { throw .sessionEnded }
            var stale: ClientLink?
            if let old = outlet.link, old !== link {
                state.links[old.id]?.caller = nil
                stale = old
            }
            let (missed, loss) = outlet.history.unreceived(after: received)
            link.socket.send(OutboundFrame.binary(answer(loss).encode()))
            for frame in missed { link.socket.send(frame) }
            outlet.link = link
            outlet.history.rebound(liveBounds)
            entry.caller = grant.caller
            state.links[link.id] = entry
            return stale
        }
    }

    /// How many connections are open.
    var connectionCount: Int { state.withLock { $0.links.values.count { !$0.closed } } }

    /// Every open connection with the session it carries.
    var openLinks: [(link: ClientLink, caller: Caller?)] {
        state.withLock { $0.links.values.filter { !$0.closed }.map { ($0.link, $0.caller) } }
    }

    // MARK: Outbox

    func open(_ session: SessionID) {
        state.withLock { state in
            guard state.outlets[session] == nil else { return }
            state.outlets[session] = Outlet(history: PushHistory(bounds: detachedBounds))
        }
    }

    func deliver(_ push: Push, to sessions: [SessionID]) {
        guard !sessions.isEmpty else { return }
        let frame = OutboundFrame.binary(Wire.encodePush(push))
        let size = push.approximateSize
        let channel = push.channel
        state.withLock { state in
            for session in sessions {
                guard let outlet = state.outlets[session] else { continue }
                outlet.history.record(frame, size: size, channel: channel)
                outlet.link?.socket.send(frame)
            }
        }
    }

    func disconnect(_ session: SessionID, reason: RtmLinkStateChangeReason, detail: String) {
        let link = state.withLock { state -> ClientLink? in
            guard let outlet = state.outlets[session], let link = outlet.link else { return nil }
            state.links[link.id]?.caller = nil
            outlet.link = nil
            outlet.history.rebound(detachedBounds)
            return link
        }
        link?.closeAfterTelling(reason: reason, detail: detail)
    }

    func release(_ session: SessionID) {
        state.withLock { state in
            if let link = state.outlets.removeValue(forKey: session)?.link {
                state.links[link.id]?.caller = nil
            }
        }
    }
}
