import SwitchboardCore

/// A publish as every Switchboard client writes it, read in one pass by position and prefix.
///
/// Nearly every frame a busy server reads is a publish, and clients write its keys in one order:
/// `"t": "publish"`, `"id"`, `"channelType"`, `"channel"`, `"message"`, then `"customType"` when
/// there is one (`ClientFrame.encode`). A frame laid out so is read straight through: each key is
/// compared with its expected bytes where it must lie, each value read once, with the same value
/// readers (and so the same checks) as the general path. Anything else (another order, a trace,
/// an unknown key, a value the readers refuse) returns nil, and the general path reads the frame,
/// with its errors: this one never decides an error.
enum HotPublish {
    /// The keys' bytes, each with its MessagePack string header, one after another, in memory of
    /// their own made once for the process's life: read through a plain pointer, with no closure
    /// and no array to count references to.
    private static let keys = Keys()

    private struct Keys {
        /// The address of the bytes (kept as a number, which is Sendable): written in `init`,
        /// only read after, never freed.
        private let address: UInt
        var bytes: UnsafeRawPointer { UnsafeRawPointer(bitPattern: address).unsafelyUnwrapped }
        /// Where each part ends in `bytes`: `"t": "publish", "id"`, `"channelType"`, `"channel"`,
        /// `"message"`, `"customType"`.
        let ends: (Int, Int, Int, Int, Int)

        init() {
            var writer = MessagePackWriter()
            var ends: [Int] = []
            writer.writeKey(.t)
            writer.writeString(ChannelOperation.wireNames.name(of: .publish))
            writer.writeKey(.id)
            ends.append(writer.bytes.count)
            for key: FrameKey in [.channelType, .channel, .message, .customType] {
                writer.writeKey(key)
                ends.append(writer.bytes.count)
            }
            // `same` compares 8 to 16 bytes: every part is that long.
            precondition(zip([0] + ends, ends).allSatisfy { (8...16).contains($1 - $0) }, "a key part outside 8...16 bytes")
            let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: writer.bytes.count, alignment: 8)
            memory.copyBytes(from: writer.bytes)
            address = UInt(bitPattern: memory.baseAddress)
            self.ends = (ends[0], ends[1], ends[2], ends[3], ends[4])
        }
    }

    /// Whether the `count` bytes at `left` and at `right` are the same, `count` from 8 to 16 (every
    /// key part, as `Keys` checks): two overlapping 8-byte loads a side.
    @inline(__always)
    private static func same(_ left: UnsafeRawPointer, _ right: UnsafeRawPointer, count: Int) -> Bool {
        left.loadUnaligned(as: UInt64.self) == right.loadUnaligned(as: UInt64.self)
            && left.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                == right.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
    }

    /// Steps `reader` over the key `keys.bytes[range]` if it is next in `bytes`.
    @inline(__always)
    private static func key(
        _ range: Range<Int>, in bytes: UnsafeRawPointer, _ reader: inout MessagePackReader<UnsafeBufferPointer<UInt8>>
    ) -> Bool {
        guard reader.remaining >= range.count, same(bytes + reader.position, keys.bytes + range.lowerBound, count: range.count)
        else { return false }
        reader.position += range.count
        return true
    }

    /// The publish in `bytes` if it is laid out as clients write it and every value reads;
    /// nil to leave the frame to the general path.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> ClientFrame? {
        view(bytes)?.frame
    }

    /// The publish in `bytes` read in place, if it is laid out as clients write it and every
    /// value reads (the same checks as the general path's readers: text is valid UTF-8); nil to
    /// leave the frame to the general path.
    static func view(_ bytes: UnsafeBufferPointer<UInt8>) -> PublishView? {
        // 5 entries, or 6 with a custom type: a fixmap header.
        guard let base = bytes.baseAddress, let header = bytes.first, header == 0x85 || header == 0x86 else { return nil }
        let start = UnsafeRawPointer(base)
        let ends = keys.ends
        var reader = MessagePackReader(bytes)
        reader.position += 1
        /// The bytes of `range`, a range of `bytes`.
        func lent(_ range: Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: start + range.lowerBound, count: range.count) }
        /// The next value's bytes if it is a string of valid UTF-8.
        func text(_ reader: inout MessagePackReader<UnsafeBufferPointer<UInt8>>) throws(WireError) -> UnsafeRawBufferPointer? {
            let range = try reader.readStringRange()
            guard UTF8Text.isValid(UnsafeBufferPointer(start: base + range.lowerBound, count: range.count)) else { return nil }
            return lent(range)
        }
        do throws(WireError) {
            guard key(0..<ends.0, in: start, &reader) else { return nil }
            let id = try reader.readInteger(UInt32.self)
            guard key(ends.0..<ends.1, in: start, &reader) else { return nil }
            let channelType = try reader.readChannelType(allowed: ChannelTypes.publishable)
            guard key(ends.1..<ends.2, in: start, &reader) else { return nil }
            guard let channel = try text(&reader) else { return nil }
            guard key(ends.2..<ends.3, in: start, &reader) else { return nil }
            let message: UnsafeRawBufferPointer
            let messageIsString: Bool
            switch try reader.peekType() {
            case .string:
                guard let string = try text(&reader) else { return nil }
                (message, messageIsString) = (string, true)
            case .binary:
                (message, messageIsString) = (lent(try reader.readBinaryRange()), false)
            default:
                return nil
            }
            var customType = UnsafeRawBufferPointer(start: start, count: 0)
            if header == 0x86 {
                guard key(ends.3..<ends.4, in: start, &reader), let text = try text(&reader) else { return nil }
                customType = text
            }
            guard reader.isAtEnd else { return nil }
            return PublishView(
                id: id, channelType: channelType, channel: channel, message: message, messageIsString: messageIsString,
                customType: customType)
        } catch {
            return nil
        }
    }
}

/// A publish read where the connection received it (`ClientFrame.publishView`): its values are
/// ranges of the received frame, valid only while that frame is, during the call that read it.
public struct PublishView {
    /// The request id.
    public let id: UInt32
    /// The channel type: message or user.
    public let channelType: RtmChannelType
    /// The channel name (for a user channel, the receiver's user id), valid UTF-8.
    public let channel: UnsafeRawBufferPointer
    /// The message: valid UTF-8 when `messageIsString`, otherwise bytes.
    public let message: UnsafeRawBufferPointer
    /// Whether the message was sent as a string.
    public let messageIsString: Bool
    /// The custom type, valid UTF-8; empty when the frame has none.
    public let customType: UnsafeRawBufferPointer

    /// The call budget a publish draws on (`ChannelOperation.rateBudget`).
    public static var rateBudget: RateBudget { .publish }
    /// The operation's name, as errors report it (`ChannelOperation.name`).
    public static var operationName: String { ChannelOperation.wireNames.name(of: .publish) }

    /// The same publish as the general path decodes it, owning copies of its values.
    public var frame: ClientFrame {
        ClientFrame(
            id: id,
            .channel(
                .publish(
                    channelType: channelType, channel: String(copyingUTF8: channel),
                    message: MessagePayload(copying: message, isString: messageIsString), customType: String(copyingUTF8: customType))))
    }
}
