import SwitchboardCore

/// Receiver lists the outbox was given before, resolved to their sessions' outlets, so the next
/// push to the same list costs no lookup per receiver.
///
/// A module hands the outbox the same array for every push to a channel while the channel's
/// receivers stay the same, so a list is recognised by the address of its storage. An entry keeps
/// its array: while it exists, that storage can be neither freed and reused for another list nor
/// changed in place (a change copies it first), so the same address means the same sessions.
/// Whoever changes which outlets exist clears the entries.
struct ResolvedReceivers<Target> {
    private var entries: [UnsafeRawPointer: (list: [SessionID], targets: [Target])] = [:]
    /// Entries kept before all are dropped (a server with more busy channels resolves more often).
    let capacity = 1024

    /// The targets of `list`, resolving it with `resolve` unless it was resolved since the last
    /// `clear`. Lists shorter than two are resolved every time.
    mutating func targets(of list: [SessionID], resolve: ([SessionID]) -> [Target]) -> [Target] {
        guard list.count > 1, let address = list.withUnsafeBufferPointer({ $0.baseAddress }) else { return resolve(list) }
        let key = UnsafeRawPointer(address)
        if let entry = entries[key] { return entry.targets }
        if entries.count >= capacity { entries.removeAll() }
        let targets = resolve(list)
        entries[key] = (list, targets)
        return targets
    }

    /// Forgets every resolved list.
    mutating func clear() {
        if !entries.isEmpty { entries.removeAll() }
    }
}
