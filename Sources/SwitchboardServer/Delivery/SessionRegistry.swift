import Synchronization
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// The one owner of which session is on which connection: every open link, the session bound to
/// it, and each session's outlet (the link its pushes go to and its numbered push history).
///
/// It is the server's `Outbox`: a push is encoded once and the same frame is queued to every live
/// receiving connection (a small message for one session is copied into its connection's batch
/// instead), and recorded in each session's history so a client that resumes gets again what it
/// did not receive. Binding a session to a link writes the login answer and the
/// pushes the client missed under the same lock that delivers pushes, so nothing overtakes them.
///
/// Lock order: this registry's lock, then a socket's; a link never calls back into the registry.
///
/// `Connection` is `WebSocketConnection` in the server, whose registry is its `Outbox`, and an
/// in-memory double in tests (`LinkConnection` says why that costs nothing).
final class SessionRegistry<Connection: LinkConnection>: Sendable {
    /// A session's delivery state. A class, so the fan-out changes its history in place through
    /// one dictionary read per receiver; it never leaves the registry's lock, which orders every
    /// access to its variables (so they are not checked for exclusive access at run time).
    private final class Outlet {
        // Stored properties in the order a push reads them (the socket, whether pushes are
        // held, the history's fields that come first), so a fan-out reads few cache lines of
        // each receiver's outlet.

        /// The link's socket without reference counting: `link` keeps it alive while it is set.
        @exclusivity(unchecked) private var socketReference: Unmanaged<Connection>?
        /// Pushes not yet handed to the link because its socket is backlogged, by priority.
        @exclusivity(unchecked) var backlog = PriorityBacklog<OutboundFrame>()
        @exclusivity(unchecked) var history: PushHistory<OutboundFrame>
        let session: SessionID
        /// The connection the session's pushes go to; nil while detached.
        var link: ClientLink<Connection>? {
            didSet { socketReference = link.map { Unmanaged.passUnretained($0.socket) } }
        }
        /// The link's socket.
        var socket: Connection? { socketReference?.takeUnretainedValue() }

        init(session: SessionID, history: PushHistory<OutboundFrame>) {
            self.session = session
            self.history = history
        }

        // Freed under the registry's lock (`State.outlets` is its only owner), which
        // `SharedFrames` needs.
        deinit { history.letGoOfSharedFrames() }

        /// Numbers and sends one push now; `alone` when no other session receives it (a small
        /// one is then copied into the socket's batch, `LinkConnection.sendCopy`).
        /// (The frame is given, not lent: the history keeps it without counting another reference.)
        func write(_ frame: consuming OutboundFrame, size: Int, channel: ChannelAddress?, alone: Bool = false) {
            socketReference?._withUnsafeGuaranteedRef { _ = alone ? $0.sendCopy(of: frame) : $0.send(frame) }
            history.record(frame, size: size, channel: channel)
        }

        /// Numbers and sends one push of a fan-out, whose frame the registry's `SharedFrames` keeps
        /// at `index`: the history holds it there, by index.
        func writeShared(_ frame: borrowing OutboundFrame, at index: Int32, size: Int, channel: ChannelAddress?) {
            socketReference?._withUnsafeGuaranteedRef { _ = $0.send(frame) }
            history.record(shared: index, size: size, channel: channel)
        }

        /// Numbers and sends held fan-out pushes (`HeldFanOut`) as `joined`, one frame of their
        /// bytes; the history holds each where the registry's `SharedFrames` keeps it.
        func writeShared(_ joined: borrowing OutboundFrame, pushes: [HeldFanOut.Push]) {
            socketReference?._withUnsafeGuaranteedRef { _ = $0.send(joined) }
            // A push of the channel of the one before it is recorded in the same channel slot,
            // without comparing names.
            var slot = history.record(shared: pushes[0].index, size: pushes[0].size, channel: pushes[0].channel)
            for index in pushes.indices.dropFirst() {
                if pushes[index].sameChannelAsPrevious {
                    history.record(shared: pushes[index].index, size: pushes[index].size, in: slot)
                } else {
                    slot = history.record(shared: pushes[index].index, size: pushes[index].size, channel: pushes[index].channel)
                }
            }
        }

        /// Numbers and sends one push that no other session receives, `count` bytes that
        /// `encode` writes: encoded straight into the socket's batch and copied from there into
        /// the history's byte ring (counted there by that size), so it needs no frame of its own.
        /// Only when `writesNow(lane: nil, …)`.
        func writeEncoded(count: Int, channel: ChannelAddress?, _ encode: (UnsafeMutableRawBufferPointer) -> Void) {
            // Recorded whether or not a socket takes it, as every push is.
            func write(_ payload: UnsafeMutableRawBufferPointer) {
                encode(payload)
                history.recordCopy(of: UnsafeRawBufferPointer(payload), size: count, channel: channel)
            }
            guard let socketReference else { return withUnsafeTemporaryAllocation(byteCount: count, alignment: 1, write) }
            socketReference._withUnsafeGuaranteedRef { _ = $0.sendBinary(payloadCount: count, write: write) }
        }

        /// Whether a push is sent now rather than held: not when the session is detached, when
        /// pushes are held already, or when the push has a priority (`lane`) and the socket has
        /// `backlogBytes` unsent.
        func writesNow(lane: Int?, backlogBytes: Int) -> Bool {
            guard let socketReference, backlog.isEmpty else { return false }
            return lane == nil || socketReference._withUnsafeGuaranteedRef { $0.bufferedBytes < backlogBytes }
        }

        /// Hands held pushes to the link, the highest priority first, while its socket holds fewer
        /// than `limit` unsent bytes (all of them when `limit` is nil). A push is numbered when it
        /// is handed over, so the numbers follow the order on the wire and a resume stays exact.
        func drain(below limit: Int?) {
            guard let link else { return }
            while !backlog.isEmpty && (limit.map { link.socket.bufferedBytes < $0 } ?? true) {
                guard let item = backlog.popFirst() else { return }
                write(item.frame, size: item.size, channel: item.channel)
            }
        }

        /// The link is gone: numbers the held pushes, in priority order, for a resume to replay
        /// (call it once the history has its detached bounds).
        func keepBacklog() {
            while let item = backlog.popFirst() { history.record(item.frame, size: item.size, channel: item.channel) }
        }
    }

    private struct Entry {
        let link: ClientLink<Connection>
        /// The socket closed; the entry stays until the link's request loop has drained.
        var closed = false

        init(link: ClientLink<Connection>) { self.link = link }

        /// The session this link carries, once bound. The link keeps it (for its request loop,
        /// which reads it without this registry's lock); only this registry sets it, under its lock.
        var caller: Caller? { link.caller }
    }

    /// The sessions' outlets by session, each counted once, here: a lookup lends the outlet
    /// without counting another reference (a push to one session looks its outlet up on every
    /// message). Only ever used under the registry's lock, which `Outlet`'s `deinit` needs too.
    /// A copy is a view for the length of one locked call: only this one owns the outlets.
    private struct OutletTable {
        private var entries: [SessionID: Unmanaged<Outlet>] = [:]

        /// The outlet of `session`.
        subscript(session: SessionID) -> Outlet? { entries[session]?.takeUnretainedValue() }

        /// The outlet of `session`, not retained: valid while the table keeps it.
        func reference(of session: SessionID) -> Unmanaged<Outlet>? { entries[session] }

        var count: Int { entries.count }

        /// Every outlet.
        var all: some Sequence<Outlet> { entries.values.lazy.map { $0.takeUnretainedValue() } }

        /// Keeps `outlet` under its session, which has none.
        mutating func insert(_ outlet: Outlet) {
            precondition(entries[outlet.session] == nil, "a session's outlet added twice")
            entries[outlet.session] = .passRetained(outlet)
        }

        /// Forgets the outlet of `session` and hands it over (freed once the caller lets go).
        mutating func remove(_ session: SessionID) -> Outlet? {
            entries.removeValue(forKey: session)?.takeRetainedValue()
        }

        /// Forgets and frees every outlet.
        mutating func removeAll() {
            for entry in entries.values { entry.release() }
            entries = [:]
        }
    }

    /// Fan-out pushes to one receiver list, held until the socket read that delivered them ends:
    /// then each receiver is handed all of them at once, while its outlet, socket and history
    /// are in the cache, rather than each push visiting every receiver in turn.
    private struct HeldFanOut {
        /// One held push: its frame, kept in `sharedFrames` at `index` (held there by the fan-out
        /// until it is handed over), and what the history records of it.
        struct Push {
            let frame: OutboundFrame
            let index: Int32
            let size: Int
            let channel: ChannelAddress?
            /// Whether the push before it in the list had the same channel.
            var sameChannelAsPrevious = false
        }

        /// The receiver list as the module gave it: kept, so its storage's address names it while
        /// the pushes are held (`ResolvedReceivers` says why).
        let sessions: [SessionID]
        /// Its outlets, not retained: valid while `outlets` does not change, and every change
        /// hands the held pushes over first.
        let outlets: [Unmanaged<Outlet>]
        var pushes: [Push]

        /// Most pushes held at once: a longer read hands them over in parts.
        static var capacity: Int { 256 }

        /// Whether a push to `list` may join these.
        func takes(_ list: [SessionID]) -> Bool {
            pushes.count < Self.capacity && Self.address(of: list) == Self.address(of: sessions)
        }

        private static func address(of list: [SessionID]) -> UnsafeRawPointer? {
            list.withUnsafeBufferPointer { $0.baseAddress.map(UnsafeRawPointer.init) }
        }
    }

    private struct State {
        var links: [ConnectionID: Entry] = [:]
        var outlets = OutletTable() {
            didSet {
                resolved.clear()
                outletsGeneration += 1
            }
        }
        /// Moves whenever an outlet is added or removed (from 1: an empty `OutboxMemo` is 0), so
        /// a memo filled at this generation names an outlet `outlets` still keeps.
        var outletsGeneration: UInt64 = 1
        /// Receiver lists resolved to their outlets (cleared whenever `outlets` changes, so the
        /// dictionary keeps every outlet listed there alive).
        var resolved = ResolvedReceivers<Unmanaged<Outlet>>()
        /// Sessions with pushes held by priority, drained by the pump while it runs.
        var backlogged: Set<SessionID> = []
        var pumping = false
        /// What detached sessions keep, against the server-wide budget.
        var budget: DetachedBudget
        /// The frames of fan-outs that sessions' histories keep by index.
        let sharedFrames = SharedFrames<OutboundFrame>()
        /// Fan-out pushes delivered during a socket read and held for its end (`ReadScope`), all
        /// to the same receivers: handed over before anything else the registry does.
        var heldFanOut: HeldFanOut?

        /// Hands the held fan-out pushes over, receiver by receiver, each receiver's in the order
        /// they were delivered; true when the pump must start for pushes now held by priority.
        /// (Every call of the registry asks: with nothing held, a check where it is called.)
        @inline(__always)
        mutating func handOverHeldFanOut(backlogBytes: Int) -> Bool {
            heldFanOut == nil ? false : handOverHeldFanOutNow(backlogBytes: backlogBytes)
        }

        @inline(never)
        private mutating func handOverHeldFanOutNow(backlogBytes: Int) -> Bool {
            guard let held = heldFanOut.take() else { return false }
            let pushes = held.pushes
            // A receiver whose pushes are written now gets them all as one frame of their bytes:
            // one reference and one write vector for the lot. The others are handed each push.
            let joined = pushes.count > 1 ? OutboundFrame.joining(pushes.lazy.map(\.frame)) : pushes[0].frame
            for reference in held.outlets {
                reference._withUnsafeGuaranteedRef { outlet in
                    if outlet.writesNow(lane: nil, backlogBytes: backlogBytes) {
                        outlet.writeShared(joined, pushes: pushes)
                        return
                    }
                    for index in pushes.indices {
                        hand(
                            shared: pushes[index].frame, at: pushes[index].index, size: pushes[index].size,
                            channel: pushes[index].channel, lane: nil, to: outlet, backlogBytes: backlogBytes)
                    }
                }
            }
            for push in held.pushes { sharedFrames.letGo(push.index) }
            return pumpNeeded()
        }

        /// The outlet of `session`, through `memo` when it was filled at this generation (no
        /// lookup), otherwise looked up and remembered there; nil when the session is unknown.
        /// Not retained: valid while the lock is held.
        mutating func outlet(of session: SessionID, memo: inout OutboxMemo) -> Unmanaged<Outlet>? {
            if memo.generation == outletsGeneration, memo.session == session, let reference = UnsafeRawPointer(bitPattern: memo.reference) {
                return Unmanaged.fromOpaque(reference)
            }
            guard let outlet = outlets.reference(of: session) else { return nil }
            (memo.session, memo.generation, memo.reference) = (session, outletsGeneration, UInt(bitPattern: outlet.toOpaque()))
            return outlet
        }

        /// `link`, if still registered, carries no session from now on.
        func unbind(_ link: ClientLink<Connection>) {
            if links[link.id] != nil { link.setCaller(nil) }
        }

        /// `outlet` of `session` loses its link: it keeps pushes under the detached bound, and
        /// counts against the budget.
        mutating func detach(_ outlet: Outlet, of session: SessionID, bounds: PushHistory<OutboundFrame>.Bounds) {
            outlet.link = nil
            outlet.history.rebound(bounds)
            outlet.keepBacklog()
            budget.detached(session, holding: outlet.history.keptBytes)
            enforceBudget()
        }

        /// Records a push for a detached session, counting what it adds against the budget.
        mutating func keep(
            _ frame: consuming OutboundFrame, size: Int, channel: ChannelAddress?, in outlet: Outlet, of session: SessionID
        ) {
            let before = outlet.history.keptBytes
            outlet.write(frame, size: size, channel: channel)
            budget.changed(by: outlet.history.keptBytes - before)
            enforceBudget()
        }

        /// Writes `frame` to `outlet`'s connection, or holds it in the session's backlog: a push
        /// with a priority (`lane`) waits there once the socket has `backlogBytes` unsent, and any
        /// push waits behind pushes already held (one without a priority in the normal lane). Held
        /// pushes past the connection's outbound bound are all handed over, and the socket closes
        /// the slow consumer as it would have. A detached session keeps the push for its resume.
        /// `alone`: no other session receives the push (`Outlet.write`).
        mutating func hand(
            _ frame: consuming OutboundFrame, size: Int, channel: ChannelAddress?, lane: Int?, to outlet: Outlet,
            backlogBytes: Int, alone: Bool = false
        ) {
            if outlet.writesNow(lane: lane, backlogBytes: backlogBytes) {
                outlet.write(frame, size: size, channel: channel, alone: alone)
                return
            }
            guard let socket = outlet.socket else {
                keep(frame, size: size, channel: channel, in: outlet, of: outlet.session)
                return
            }
            let item = PriorityBacklog.Item(frame: frame, size: size, wireBytes: frame.count, channel: channel)
            outlet.backlog.append(item, lane: lane ?? PriorityBacklog<OutboundFrame>.normalLane)
            backlogged.insert(outlet.session)
            if outlet.backlog.wireBytes + socket.bufferedBytes > socket.maxOutboundBytes { outlet.drain(below: nil) }
        }

        /// `hand` for one receiver of a fan-out whose frame `sharedFrames` keeps at `index`: written
        /// now, the session's history holds the frame there; otherwise as `hand`.
        mutating func hand(
            shared frame: borrowing OutboundFrame, at index: Int32, size: Int, channel: ChannelAddress?, lane: Int?,
            to outlet: Outlet, backlogBytes: Int
        ) {
            if outlet.writesNow(lane: lane, backlogBytes: backlogBytes) {
                outlet.writeShared(frame, at: index, size: size, channel: channel)
                return
            }
            hand(copy frame, size: size, channel: channel, lane: lane, to: outlet, backlogBytes: backlogBytes)
        }

        /// Whether pushes are held and the pump is not running yet (it is marked running).
        mutating func pumpNeeded() -> Bool {
            guard !pumping, !backlogged.isEmpty else { return false }
            pumping = true
            return true
        }

        /// Past the budget, forgets the oldest pushes of the session detached longest ago (a
        /// resume reports them lost), until the total fits.
        mutating func enforceBudget() {
            while budget.isOver, let oldest = budget.oldest() {
                guard let outlet = outlets[oldest] else {
                    budget.left(oldest, holding: 0)
                    continue
                }
                let freed = outlet.history.forgetOldestPush()
                if freed == 0 {
                    budget.left(oldest, holding: 0)
                } else {
                    budget.changed(by: -freed)
                }
            }
        }
    }

    /// Why a session could not be bound to a link.
    enum BindFailure: Error {
        /// The link closed while the login was answered.
        case linkClosed
        /// The session ended while the login was answered (another login replaced it).
        case sessionEnded
    }

    /// Reached only through `withState` (and the fan-out, which may hold its pushes, and `deinit`).
    private let state: Mutex<State>
    /// What a session with a connection keeps: enough for the pushes a dead connection may have
    /// swallowed before the server noticed.
    private let liveBounds: PushHistory<OutboundFrame>.Bounds
    /// What a detached session keeps: the resume bound.
    private let detachedBounds: PushHistory<OutboundFrame>.Bounds
    /// Unsent bytes on a socket from which its pushes with a priority wait in the backlog.
    let backlogBytes: Int
    /// How often held pushes are offered to their sockets again (real time: this paces I/O).
    let pumpInterval: Duration

    /// Where message deliveries are counted.
    let metrics: ServerMetrics

    init(
        limits: Limits, backlogBytes: Int = 64 * 1024, pumpInterval: Duration = .milliseconds(1),
        metrics: ServerMetrics = ServerMetrics()
    ) {
        state = Mutex(State(budget: DetachedBudget(limit: limits.sessions.resumeBufferTotalBytes)))
        self.metrics = metrics
        self.backlogBytes = backlogBytes
        self.pumpInterval = pumpInterval
        detachedBounds = .init(frames: limits.sessions.resumeBufferMaxMessages, bytes: limits.sessions.resumeBufferMaxBytes)
        liveBounds = .init(
            frames: min(limits.sessions.resumeReplayMaxMessages, limits.sessions.resumeBufferMaxMessages),
            bytes: min(limits.sessions.resumeReplayMaxBytes, limits.sessions.resumeBufferMaxBytes))
    }

    // The outlets are counted by their table alone, and freed under the lock. Pushes still held
    // for a read's end go with them: there is no one left to hand them to (and a hand-over could
    // start the pump, which would keep a registry that is going away).
    deinit { state.withLock { $0.outlets.removeAll() } }

    /// Runs `body` under the lock, once fan-out pushes held for the end of a read are handed
    /// over: whatever the registry does next sees them delivered, in order.
    private func withState<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        let backlogBytes = backlogBytes
        var startPump = false
        let result = try state.withLock { state throws(Failure) -> sending Result in
            startPump = state.handOverHeldFanOut(backlogBytes: backlogBytes)
            return try body(&state)
        }
        if startPump { pump() }
        return result
    }

    /// The read that `ReadScope` marks on this thread has ended: fan-out pushes held for it are
    /// handed over now.
    func readEnded() {
        if ReadScope.leave() { withState { _ in } }
    }

    // MARK: Links (called by the connection hub and the dispatcher)

    /// A connection opened.
    func opened(_ link: ClientLink<Connection>) {
        withState { $0.links[link.id] = Entry(link: link) }
    }

    /// The socket closed: its session, if any, is detached at once so nothing sent from now on is
    /// lost. The link keeps its caller until `remove`, so requests it had already received are
    /// still answered.
    func closed(_ link: ClientLink<Connection>) {
        withState { state in
            guard var entry = state.links[link.id] else { return }
            entry.closed = true
            state.links[link.id] = entry
            if let session = entry.caller?.session, let outlet = state.outlets[session], outlet.link === link {
                state.detach(outlet, of: session, bounds: detachedBounds)
            }
        }
    }

    /// Forgets a closed link whose requests are all answered. Returns the session it still carried,
    /// which has lost its connection (nil when the session has moved to another link meanwhile).
    func remove(_ link: ClientLink<Connection>) -> SessionID? {
        withState { state in
            guard let session = state.links.removeValue(forKey: link.id)?.caller?.session,
                let outlet = state.outlets[session], outlet.link == nil || outlet.link === link
            else { return nil }
            return session
        }
    }

    /// The session `link` carries, if it is logged in.
    func caller(on link: ClientLink<Connection>) -> Caller? { link.caller }

    /// Whether `session` is carried by an open link now.
    func isBound(_ session: SessionID) -> Bool {
        withState { $0.outlets[session]?.link != nil }
    }

    /// Binds the session of `grant` to `link`: writes the login answer (`answer`, given what a
    /// resume lost), then the pushes numbered after `received`, and from then on the session's
    /// pushes go to `link`. A link that carried the session before is unbound and returned, for
    /// the caller to close as stale.
    func bind(
        _ grant: LoginGranted, to link: ClientLink<Connection>, received: UInt64, answer: (ResumeLoss) -> ServerFrame
    ) throws(BindFailure) -> ClientLink<Connection>? {
        try withState { state throws(BindFailure) -> ClientLink<Connection>? in
            guard let entry = state.links[link.id], !entry.closed else { throw .linkClosed }
            guard let outlet = state.outlets[grant.session] else { throw .sessionEnded }
            var stale: ClientLink<Connection>?
            if let old = outlet.link, old !== link {
                state.unbind(old)
                stale = old
            }
            if !outlet.backlog.isEmpty {
                // Held for a link being replaced: kept under the detached bound, then replayed.
                outlet.history.rebound(detachedBounds)
                outlet.keepBacklog()
            }
            let (missed, loss) = outlet.history.unreceived(after: received) { OutboundFrame.encoding(opcode: .binary, payload: $0) }
            link.socket.send(OutboundFrame.binary(answer(loss).encode()))
            for frame in missed { link.socket.send(frame) }
            state.budget.left(grant.session, holding: outlet.history.keptBytes)
            outlet.link = link
            outlet.history.rebound(liveBounds)
            link.setCaller(grant.caller)
            return stale
        }
    }

    /// How many connections are open.
    var connectionCount: Int { withState { $0.links.values.count { !$0.closed } } }

    /// Open connections: those not logged in yet, and those carrying a session.
    var connectionStates: (awaitingLogin: Int, loggedIn: Int) {
        withState { state in
            state.links.values.reduce(into: (0, 0)) { counts, entry in
                guard !entry.closed else { return }
                if entry.caller == nil { counts.0 += 1 } else { counts.1 += 1 }
            }
        }
    }

    /// Logged-in connections of each app, apps with none left out.
    var connectionsByApp: [AppID: Int] {
        withState { state in
            state.links.values.reduce(into: [:]) { counts, entry in
                if !entry.closed, let app = entry.caller?.app { counts[app, default: 0] += 1 }
            }
        }
    }

    /// Sessions with a connection, sessions waiting for a resume, and the bytes of pushes the
    /// waiting ones keep.
    var sessionStates: (attached: Int, detached: Int, detachedBytes: Int) {
        withState { state in
            let attached = state.outlets.all.count { $0.link != nil }
            return (attached, state.outlets.count - attached, state.budget.bytes)
        }
    }

    /// Fan-out frames the sessions' histories keep by index (`SharedFrames`).
    var sharedFrameCount: Int { withState { $0.sharedFrames.count } }

    /// Every open connection with the session it carries.
    var openLinks: [(link: ClientLink<Connection>, caller: Caller?)] {
        withState { $0.links.values.filter { !$0.closed }.map { ($0.link, $0.caller) } }
    }

    // MARK: Outbox

    func open(_ session: SessionID) {
        open(session, numberedFrom: 0)
    }

    func open(_ session: SessionID, numberedFrom received: UInt64) {
        withState { state in
            guard state.outlets[session] == nil else { return }
            let history = PushHistory(bounds: detachedBounds, numberedFrom: received, sharedFrames: state.sharedFrames)
            state.outlets.insert(Outlet(session: session, history: history))
            state.budget.detached(session, holding: 0)
        }
    }

    func deliver(_ push: Push, to sessions: [SessionID]) {
        deliver(push, to: sessions, lane: nil)
    }

    func deliver(_ push: consuming Push, to session: SessionID) {
        countDelivery(of: push, receivers: 1)
        deliverAlone(push, to: session)
    }

    func deliver(_ message: consuming LentMessage, to session: SessionID) {
        var memo = OutboxMemo()
        deliver(message, to: session, memo: &memo)
    }

    func deliver(_ message: consuming LentMessage, to session: SessionID, memo: inout OutboxMemo) {
        metrics.delivered(message.channelType, receivers: 1)
        let payloadCount = Wire.encodedSize(of: message)
        guard payloadCount <= Connection.batchedBinaryLimit else { return deliverAlone(.message(message.owned()), to: session) }
        // Encoded from the publish's bytes where the session's pushes are written: the message is
        // the registry's own here, so the closure reaches it where it is, uncopied.
        deliver(count: payloadCount, channel: ChannelAddress(message.channelType, message.channelName), to: session, memo: &memo) {
            precondition(Wire.encodePush(message, into: $0) == $0.count, "a push not the size it was measured")
        }
    }

    func deliver(_ message: LentMessage, to sessions: [SessionID]) {
        guard sessions.count > 1 else {
            if let session = sessions.first { deliver(message, to: session) }
            return
        }
        metrics.delivered(message.channelType, receivers: sessions.count)
        // Encoded once, straight into the frame every receiver gets.
        let frame = OutboundFrame.binary(payloadCount: Wire.encodedSize(of: message)) { Wire.encodePush(message, into: $0) }
        deliver(
            frame, size: message.approximateSize, channel: ChannelAddress(message.channelType, message.channelName), to: sessions,
            lane: nil)
    }

    /// Counts a message push handed to `receivers` sessions (one relaxed add, no lock).
    @inline(__always)
    private func countDelivery(of push: Push, receivers: Int) {
        if case .message(let message) = push { metrics.delivered(message.channelType, receivers: receivers) }
    }

    /// Delivers `push` to its one receiver.
    private func deliverAlone(_ push: consuming Push, to session: SessionID) {
        let channel = push.channel
        // A small message is encoded where the session's pushes are written and copied into its
        // history from there (counted by its exact size): no frame is made for it. The push is
        // the registry's own here, so the closure reaches it where it is, uncopied.
        if let payloadCount = Wire.encodedSize(of: push), payloadCount <= Connection.batchedBinaryLimit {
            var memo = OutboxMemo()
            deliver(count: payloadCount, channel: channel, to: session, memo: &memo) {
                precondition(Wire.encodePush(push, into: $0) == $0.count, "a push not the size it was measured")
            }
            return
        }
        deliver(Self.frame(of: push), size: push.approximateSize, channel: channel, to: session)
    }

    /// Delivers a push to one session, `count` bytes that `encode` writes (counted by that size):
    /// encoded into the socket's batch where the session's pushes are written now, otherwise into
    /// a frame of its own, handed on like any other. `memo`: where the registry found the
    /// session's outlet last (`State.outlet(of:memo:)`).
    private func deliver(
        count: Int, channel: ChannelAddress?, to session: SessionID, memo: inout OutboxMemo,
        _ encode: (UnsafeMutableRawBufferPointer) -> Void
    ) {
        let written = withState { state -> Bool in
            guard let outlet = state.outlet(of: session, memo: &memo) else { return true }
            return outlet._withUnsafeGuaranteedRef { outlet -> Bool in
                guard outlet.writesNow(lane: nil, backlogBytes: backlogBytes) else { return false }
                outlet.writeEncoded(count: count, channel: channel, encode)
                return true
            }
        }
        if !written {
            let frame = OutboundFrame.binary(payloadCount: count) { payload in
                encode(payload)
                return count
            }
            deliver(frame, size: count, channel: channel, to: session)
        }
    }

    /// Delivers `frame`, a push to one session, through `State.hand`.
    private func deliver(_ frame: consuming OutboundFrame, size: Int, channel: ChannelAddress?, to session: SessionID) {
        // Taken out of the optional under the lock: given to the session's history, not copied.
        var frame = Optional(frame)
        let startPump = withState { state -> Bool in
            guard let outlet = state.outlets[session], let frame = frame.take() else { return false }
            state.hand(frame, size: size, channel: channel, lane: nil, to: outlet, backlogBytes: backlogBytes, alone: true)
            return state.pumpNeeded()
        }
        if startPump { pump() }
    }

    /// `push` as one frame for all its receivers; a message is encoded straight into the frame.
    private static func frame(of push: Push) -> OutboundFrame {
        guard let size = Wire.encodedSize(of: push) else { return OutboundFrame.binary(Wire.encodePush(push)) }
        return OutboundFrame.binary(payloadCount: size) { Wire.encodePush(push, into: $0) }
    }

    func deliver(_ push: Push, to sessions: [SessionID], priority: RtmMessagePriority) {
        deliver(push, to: sessions, lane: PriorityBacklog<OutboundFrame>.lane(for: priority))
    }

    /// Writes `push` to each session's connection, or holds it (`State.hand`).
    private func deliver(_ push: Push, to sessions: [SessionID], lane: Int?) {
        guard !sessions.isEmpty else { return }
        countDelivery(of: push, receivers: sessions.count)
        if lane == nil, sessions.count == 1 {
            deliverAlone(push, to: sessions[0])
            return
        }
        deliver(Self.frame(of: push), size: push.approximateSize, channel: push.channel, to: sessions, lane: lane)
    }

    /// Writes `frame`, one push to several sessions, to each session's connection, or holds it
    /// (`State.hand`).
    /// During a socket read (`ReadScope`), a push to several sessions without a priority is held
    /// for the read's end as long as the pushes before it went to the same list: a busy channel's
    /// publishes of one read then reach each receiver together (`HeldFanOut`).
    private func deliver(_ frame: OutboundFrame, size: Int, channel: ChannelAddress?, to sessions: [SessionID], lane: Int?) {
        let holds = lane == nil && ReadScope.isOpen
        let backlogBytes = backlogBytes
        let startPump = state.withLock { state -> Bool in
            if holds, state.heldFanOut?.takes(sessions) == true {
                let index = state.sharedFrames.add(frame)
                let same = state.heldFanOut!.pushes.last?.channel == channel
                state.heldFanOut!.pushes.append(
                    .init(frame: frame, index: index, size: size, channel: channel, sameChannelAsPrevious: same))
                return false
            }
            let pumpForHandOver = state.handOverHeldFanOut(backlogBytes: backlogBytes)
            let outlets = state.resolved.targets(of: sessions) { [outlets = state.outlets] list in
                list.compactMap { outlets.reference(of: $0) }
            }
            if outlets.count == 1 {
                outlets[0]._withUnsafeGuaranteedRef {
                    state.hand(frame, size: size, channel: channel, lane: lane, to: $0, backlogBytes: backlogBytes, alone: true)
                }
                return state.pumpNeeded() || pumpForHandOver
            }
            guard !outlets.isEmpty else { return pumpForHandOver }
            // One frame for every receiver's history, counted in `sharedFrames`; held there for
            // the fan-out until every receiver had it.
            let index = state.sharedFrames.add(frame)
            if holds {
                var pushes = [HeldFanOut.Push(frame: frame, index: index, size: size, channel: channel)]
                pushes.reserveCapacity(16)
                state.heldFanOut = HeldFanOut(sessions: sessions, outlets: outlets, pushes: pushes)
                ReadScope.noteHolding()
                return pumpForHandOver
            }
            for reference in outlets {
                reference._withUnsafeGuaranteedRef {
                    state.hand(shared: frame, at: index, size: size, channel: channel, lane: lane, to: $0, backlogBytes: backlogBytes)
                }
            }
            state.sharedFrames.letGo(index)
            return state.pumpNeeded() || pumpForHandOver
        }
        if startPump { pump() }
    }

    /// Offers held pushes to their sockets every `pumpInterval` until none are held.
    private func pump() {
        let interval = pumpInterval
        Task { [self] in
            while true {
                try? await Task.sleep(for: interval)
                let more = withState { state -> Bool in
                    for session in state.backlogged {
                        guard let outlet = state.outlets[session], outlet.link != nil else {
                            state.backlogged.remove(session)
                            continue
                        }
                        outlet.drain(below: backlogBytes)
                        if outlet.backlog.isEmpty { state.backlogged.remove(session) }
                    }
                    state.pumping = !state.backlogged.isEmpty
                    return state.pumping
                }
                if !more { return }
            }
        }
    }

    func disconnect(_ session: SessionID, reason: RtmLinkStateChangeReason, detail: String) {
        let link = withState { state -> ClientLink<Connection>? in
            guard let outlet = state.outlets[session], let link = outlet.link else { return nil }
            state.unbind(link)
            state.detach(outlet, of: session, bounds: detachedBounds)
            return link
        }
        link?.closeAfterTelling(reason: reason, detail: detail)
    }

    func release(_ session: SessionID) {
        withState { state in
            guard let outlet = state.outlets.remove(session) else { return }
            state.budget.left(session, holding: outlet.history.keptBytes)
            if let link = outlet.link { state.unbind(link) }
        }
    }
}

/// The server's outbox is the registry of its sockets. Constrained to them, so the bus's calls
/// reach code specialised for `WebSocketConnection` (`LinkConnection`).
extension SessionRegistry: Outbox where Connection == WebSocketConnection {}

/// Bytes lent to the registry's lock for the length of one call.
private struct LentBytes: @unchecked Sendable {
    // Sendable proof: made and used within one call on one thread (`SessionRegistry.deliver`),
    // which only copies the bytes under its lock and keeps no reference to them; the memory is
    // the caller's for that call.
    let payload: UnsafeRawBufferPointer
    init(_ payload: UnsafeRawBufferPointer) { self.payload = payload }
}
