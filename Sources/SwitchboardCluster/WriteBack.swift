import SwitchboardCore
import SwitchboardWire

/// What the write-backs after a restart of Redis that kept nothing share (the session directory's
/// and the stores' `restore()`): entries sent to a script a hundred at a time, and pairs of
/// strings packed into one argument.
public enum WriteBack {
    /// How many entries one script call takes.
    public static let batch = 100

    /// Calls `run` with `entries` a batch at a time; returns the sum of what the calls answered
    /// (the entries written back).
    public static func inBatches<Entry, Failure: Error>(
        _ entries: [Entry], run: (ArraySlice<Entry>) async throws(Failure) -> Int
    ) async throws(Failure) -> Int {
        var restored = 0
        var at = 0
        while at < entries.count {
            restored += try await run(entries[at..<min(at + batch, entries.count)])
            at += batch
        }
        return restored
    }

    /// Calls `run` with the arguments of `entries`, a batch at a time, each entry's `arguments`
    /// one after the other; returns the sum of what the calls answered.
    public static func inBatches<Entry>(
        _ entries: [Entry], arguments: (Entry) -> [[UInt8]], run: ([[UInt8]]) async throws(RtmError) -> Int
    ) async throws(RtmError) -> Int {
        try await inBatches(entries) { (batch: ArraySlice<Entry>) async throws(RtmError) -> Int in
            try await run(batch.flatMap(arguments))
        }
    }

    /// Pairs of strings as a script takes them in one argument: a MessagePack array
    /// `[key, value, …]` sorted by key (`cmsgpack.unpack` reads it).
    public static func packed(_ pairs: [String: String]) -> [UInt8] {
        var writer = MessagePackWriter()
        writer.writeArrayHeader(pairs.count * 2)
        for (key, value) in pairs.sorted(by: { $0.key < $1.key }) {
            writer.writeString(key)
            writer.writeString(value)
        }
        return writer.bytes
    }
}
