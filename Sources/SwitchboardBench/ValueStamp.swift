/// The benchmark's metadata value: `<sequence>:<send time>` in decimal (the time in nanoseconds of
/// `MonotonicClock`), padded with dots to the requested size, so that a storage event carries
/// which write it reports and when that write was sent.
public enum ValueStamp {
    /// A value of at least `size` bytes for write `sequence` sent at `timestamp`.
    public static func make(sequence: UInt64, timestamp: UInt64, size: Int) -> String {
        let text = "\(sequence):\(timestamp)"
        let padding = size - text.utf8.count
        return padding > 0 ? text + String(repeating: ".", count: padding) : text
    }

    /// The sequence number and send time in `value`; nil when it is not a stamp.
    public static func read(_ value: UnsafeRawBufferPointer) -> (sequence: UInt64, timestamp: UInt64)? {
        var sequence: UInt64 = 0
        var timestamp: UInt64 = 0
        var sequenceDigits = 0
        var timestampDigits = 0
        var inTimestamp = false
        for byte in value {
            if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                let digit = UInt64(byte - UInt8(ascii: "0"))
                if inTimestamp {
                    guard timestampDigits < 19 else { return nil }
                    timestamp = timestamp * 10 + digit
                    timestampDigits += 1
                } else {
                    guard sequenceDigits < 19 else { return nil }
                    sequence = sequence * 10 + digit
                    sequenceDigits += 1
                }
            } else if byte == UInt8(ascii: ":") && !inTimestamp {
                inTimestamp = true
            } else if byte == UInt8(ascii: ".") && inTimestamp {
                break
            } else {
                return nil
            }
        }
        return sequenceDigits > 0 && timestampDigits > 0 ? (sequence, timestamp) : nil
    }

    /// The sequence number and send time in `value`, as `read` finds them in bytes.
    public static func read(_ value: String) -> (sequence: UInt64, timestamp: UInt64)? {
        var utf8 = Array(value.utf8)
        return utf8.withUnsafeMutableBytes { read(UnsafeRawBufferPointer($0)) }
    }
}
