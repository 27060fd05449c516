import Synchronization
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// The server's `Outbox`: encodes each push once and queues the same frame to every live
/// receiving connection; keeps pushes for detached sessions until they resume or end.
///
/// Lock order: this outbox's lock, then a link's lock; a link never calls back into the outbox.
final class ServerOutbox: Outbox {
    private enum Outlet {
        case live(ClientLink)
        case detached(ResumeBuffer<(frame: OutboundFrame, size: Int)>)
    }

    private struct State {
        var links: [ConnectionID: ClientLink] = [:]
        var outlets: [SessionID: Outlet] = [:]
        var sessionOnConnection: [ConnectionID: SessionID] = [:]
    }

    private let state = Mutex(State())
    private let limits: Limits

    init(limits: Limits) { self.limits = limits }

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
            if case .live(let link) = state.outlets[session], link.id == connection {
                state.outlets[session] = .detached(newBuffer())
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
                switch state.outlets[session] {
                case .live(let link):
                    link.send(frame)
                case .detached(var buffer):
                    state.outlets[session] = nil
                    buffer.append((frame, size), size: size, channel: channel)
                    state.outlets[session] = .detached(buffer)
                case nil:
                    continue
                }
            }
        }
    }

    func attach(_ session: SessionID, to connection: ConnectionID) -> ResumeLoss {
        state.withLock { state in
            var kept: [(frame: OutboundFrame, size: Int)] = []
            var loss = ResumeLoss.none
            if case .detached(let buffer) = state.outlets[session] {
                (kept, loss) = buffer.drain()
            }
            guard let link = state.links[connection] else {
                var buffer = newBuffer()
                for item in kept { buffer.append(item, size: item.size, channel: nil) }
                state.outlets[session] = .detached(buffer)
                return loss
            }
            for item in kept { link.send(item.frame) }
            state.outlets[session] = .live(link)
            state.sessionOnConnection[connection] = session
            return loss
        }
    }

    func detach(_ session: SessionID) {
        state.withLock { state in
            guard case .live(let link) = state.outlets[session] else { return }
            state.sessionOnConnection[link.id] = nil
            state.outlets[session] = .detached(newBuffer())
        }
    }

    func release(_ session: SessionID) {
        state.withLock { state in
            if case .live(let link) = state.outlets.removeValue(forKey: session) {
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

    private func newBuffer() -> ResumeBuffer<(frame: OutboundFrame, size: Int)> {
        ResumeBuffer(maxFrames: limits.resumeBufferMaxMessages, maxBytes: limits.resumeBufferMaxBytes)
    }
}
