import SwitchboardCore
import SwitchboardWire

/// What the stores' write-backs (`restore()`) share: entries sent to a script a hundred at a
/// time, and pairs of strings packed into one argument.
enum WriteBack {
    /// How many entries one script call takes.
    static let batch = 100

    /// Calls `run` with the arguments of `entries`, a batch at a time, each entry's `arguments`
    /// one after the other; returns the sum of what the calls answered (the entries written back).
    static func inBatches<Entry>(
        _ entries: [Entry], arguments: (Entry) -> [[UInt8]], run: ([[UInt8]]) async throws(RtmError) -> Int
    ) async throws(RtmError) -> Int {
        var restored = 0
        var at = 0
        while at < entries.count {
            restored += try await run(entries[at..<min(at + batch, entries.count)].flatMap(arguments))
            at += batch
        }
        return restored
    }

    /// Pairs of strings as a script takes them in one argument: a MessagePack array
    /// `[key, value, …]` sorted by key (`cmsgpack.unpack` reads it).
    static func packed(_ pairs: [String: String]) -> [UInt8] {
        var writer = MessagePackWriter()
        writer.writeArrayHeader(pairs.count * 2)
        for (key, value) in pairs.sorted(by: { $0.key < $1.key }) {
            writer.writeString(key)
            writer.writeString(value)
        }
        return writer.bytes
    }
}
