import SwitchboardWire

/// Pairs of strings as a script takes them in one argument: a MessagePack array
/// `[key, value, …]` sorted by key (`cmsgpack.unpack` reads it).
enum FlatPairs {
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
