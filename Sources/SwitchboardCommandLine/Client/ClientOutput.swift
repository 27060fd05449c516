import Foundation
import SwitchboardCore
import SwitchboardServer

/// Where `switchboard client` writes: records (messages, answers) to one sink, notes (what it is
/// doing, errors) to another; records as text for people or as JSON lines for programs.
public struct ClientOutput: Sendable {
    let record: @Sendable (String) -> Void
    let note: @Sendable (String) -> Void
    /// Returns when the user interrupts a `sub` (or when its task is cancelled).
    let interruption: @Sendable () async -> Void

    /// Records and notes to the given sinks, a `sub` ending when `interruption` returns (for
    /// tests: drive the command in-process).
    public init(
        record: @escaping @Sendable (String) -> Void, note: @escaping @Sendable (String) -> Void,
        interruption: @escaping @Sendable () async -> Void = { await Cancellation.wait() }
    ) {
        self.record = record
        self.note = note
        self.interruption = interruption
    }

    /// Records to standard output, notes to standard error; SIGINT or SIGTERM ends a `sub`.
    public static let standard = ClientOutput(
        record: { line in FileHandle.standardOutput.write(Data((line + "\n").utf8)) },
        note: { line in FileHandle.standardError.write(Data((line + "\n").utf8)) },
        interruption: {
            let (signalled, signal) = AsyncStream<Void>.makeStream()
            let watcher = SignalWatcher(signals: [SIGINT, SIGTERM]) { signal.finish() }
            for await _ in signalled {}
            watcher.stop()
        })
}

/// One thing the client prints: a line for people, and its fields for a JSON line.
struct ClientRecord {
    let text: String
    let fields: [(String, JSONValue)]

    func line(json: Bool) -> String { json ? JSONValue.object(fields).text : text }
}
