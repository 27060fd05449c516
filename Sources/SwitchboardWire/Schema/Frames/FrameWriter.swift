/// Builds one frame map whose field count is known only after the fields are written: the head
/// (`"t"` and, for requests and answers, `"id"`) and the fields go into one buffer, and the map
/// header is put in front at the end.
struct FrameWriter {
    /// The entries after the map header.
    var body: MessagePackWriter
    /// How many entries `body` holds.
    var count: Int

    /// Starts a frame of type `type` with request id `id` (nil for a push).
    init(type: String, id: UInt32?, capacity: Int = 64) {
        body = MessagePackWriter(reservingCapacity: capacity)
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
        var frame = MessagePackWriter(reservingCapacity: body.bytes.count + 5)
        frame.writeMapHeader(count)
        frame.bytes.append(contentsOf: body.bytes)
        return frame.bytes
    }
}
