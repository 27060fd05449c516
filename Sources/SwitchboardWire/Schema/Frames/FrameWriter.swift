/// Builds one frame map whose field count is known only after the fields are written: one byte is
/// kept for the map header, the head (`"t"` and, for requests and answers, `"id"`) and the fields
/// follow in the same buffer, and the header is filled in at the end (a map of 16 entries or more,
/// which no frame has today, needs a longer header and one copy).
struct FrameWriter {
    /// The header byte, then the entries.
    var body: MessagePackWriter
    /// How many entries `body` holds.
    var count: Int

    /// Starts a frame of type `type` with request id `id` (nil for a push).
    init(type: String, id: UInt32?, capacity: Int = 64) {
        body = MessagePackWriter(reservingCapacity: capacity)
        body.bytes.append(0x80)
        body.writeKey(.t); body.writeString(type)
        count = 1
        if let id {
            body.writeKey(.id); body.writeUInt(UInt64(id))
            count += 1
        }
    }

    /// Writes one entry.
    mutating func field(_ key: FrameKey, _ write: (inout MessagePackWriter) -> Void) {
        body.writeKey(key)
        write(&body)
        count += 1
    }

    /// The whole map.
    func finish() -> [UInt8] {
        var frame = body.bytes
        if count < 16 {
            frame[0] = 0x80 | UInt8(count)
            return frame
        }
        var header = MessagePackWriter(reservingCapacity: frame.count + 4)
        header.writeMapHeader(count)
        header.bytes.append(contentsOf: frame.dropFirst())
        return header.bytes
    }
}
