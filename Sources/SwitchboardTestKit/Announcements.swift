import SwitchboardCore

/// An example extension module with a client operation and a push of its own (the walk-through
/// in Modules.md, "Adding a module"): `x.announce` sends its body to every session of the
/// caller's app as an `x.announcement` push, and answers how many sessions it reached.
///
/// Add it with `SwitchboardServer(configuration:) { $0.extensions.append(Announcements()) }`;
/// clients call it with `client.callExtension("announce", body: "…")`.
public actor Announcements: Module {
    public nonisolated let name = "announcements"
    /// The longest announcement, in bytes.
    public static let maxBytes = 1024

    private enum State {
        case idle
        case running(ModuleContext)
    }
    private var state = State.idle
    /// Every session of every app, learned from the bus.
    private var sessions: [AppID: Set<SessionID>] = [:]

    /// Creates the module.
    public init() {}

    public func start(_ context: ModuleContext) async {
        state = .running(context)
        // One subscription, so a session's opening is never seen after its closing.
        context.bus.subscription()
            .on(SessionOpened.self) { [self] event in await opened(event.caller) }
            .on(SessionClosed.self) { [self] event in await closed(event.caller) }
        context.bus.handleExtension("announce") { [self] call throws(RtmError) in try await announce(call) }
    }

    private func opened(_ caller: Caller) { sessions[caller.app, default: []].insert(caller.session) }

    private func closed(_ caller: Caller) {
        sessions[caller.app]?.remove(caller.session)
        if sessions[caller.app]?.isEmpty == true { sessions[caller.app] = nil }
    }

    private func announce(_ call: ExtensionCall) throws(RtmError) -> MessagePayload? {
        guard case .running(let context) = state else {
            throw RtmError(.notInitialized, operation: "x.announce", reason: "the announcements module has not been started")
        }
        guard call.body.byteCount <= Self.maxBytes else {
            throw RtmError(
                .invalidParameter, operation: "x.announce",
                reason: "an announcement is \(call.body.byteCount) bytes; at most \(Self.maxBytes)")
        }
        let receivers = (sessions[call.caller.app] ?? []).sorted()
        context.log(.info, "\(call.caller.user) announced to \(receivers.count) sessions")
        context.outbox.deliver(.extension(ExtensionPush(name: "announcement", body: call.body)), to: receivers)
        return .string("\(receivers.count)")
    }
}
