import SwitchboardTestKit
import Testing
import SwitchboardCore
@testable import SwitchboardWire

/// The server reads a publish laid out as clients write it in one pass (`HotPublish`); whatever
/// it reads so must be what the general path reads, and every other frame, every error included,
/// must come out of the server's decoding exactly as before.
@Suite("Publishes read in one pass", .timeLimit(.minutes(2)))
struct HotPublishTests {
    /// What the server decodes from `bytes`: the frame, or the error.
    private static func served(_ bytes: [UInt8]) -> Result<ClientFrame, WireError> {
        bytes.withUnsafeBufferPointer { buffer in Result { () throws(WireError) in try ClientFrame.decode(buffer) } }
    }

    /// What the general path decodes from `bytes`.
    private static func general(_ bytes: [UInt8]) -> Result<ClientFrame, WireError> {
        Result { () throws(WireError) in try ClientFrame.decode(bytes) }
    }

    /// Publishes of every shape a client writes: small and large ids, both channel types, text and
    /// binary payloads up to 16-bit lengths, with and without a custom type.
    static let clientPublishes: [ClientFrame] = {
        var frames: [ClientFrame] = []
        let ids: [UInt32] = [0, 1, 127, 128, 255, 256, 65_535, 65_536, .max]
        let payloads: [MessagePayload] = [
            .string(""), .string("hello"), .string("é🙂 text"), .string(String(repeating: "x", count: 300)),
            .binary([]), .binary([0, 1, 0xff]), .binary([UInt8](repeating: 7, count: 70_000)),
        ]
        for (index, id) in ids.enumerated() {
            for payload in payloads {
                for channelType: RtmChannelType in [.message, .user] {
                    let channel = index % 2 == 0 ? "lobby" : String(repeating: "c", count: 40)
                    let customType = index % 3 == 0 ? "" : "chat"
                    frames.append(.publish(id: id, channelType: channelType, channel: channel, message: payload, customType: customType))
                }
            }
        }
        return frames
    }()

    @Test("every publish a client writes is read in one pass, as the general path reads it")
    func clientPublishesTakeTheOnePass() throws {
        for frame in Self.clientPublishes {
            let bytes = frame.encode()
            let hot = try #require(bytes.withUnsafeBufferPointer { HotPublish.decode($0) }, "\(frame)")
            #expect(hot == frame)
            #expect(hot == (try? Self.general(bytes).get()))
        }
    }

    @Test("a push written from a publish read in place is, byte for byte, the push of the owned message")
    func pushesFromLentBytesEqualOwnedPushes() throws {
        for frame in Self.clientPublishes {
            guard case .channel(.publish(_, _, let message, let customType)) = frame.operation else { continue }
            try frame.encode().withUnsafeBufferPointer { buffer in
                let view = try #require(ClientFrame.publishView(buffer), "\(frame)")
                for publisher in ["alice", String(repeating: "p", count: 64)] {
                    let lent = LentMessage(
                        channelType: view.channelType, channelName: publisher, payload: view.message,
                        payloadIsString: view.messageIsString, publisher: publisher, customType: view.customType,
                        timestamp: 1_700_000_000_123)
                    let size = Wire.encodedSize(of: lent)
                    let written = [UInt8](unsafeUninitializedCapacity: size) { memory, count in
                        count = Wire.encodePush(lent, into: UnsafeMutableRawBufferPointer(memory))
                    }
                    #expect(written.count == size)
                    #expect(written == Wire.encodePush(.message(lent.owned())))
                    #expect(lent.owned().payload == message && lent.owned().customType == customType)
                }
            }
        }
    }

    @Test("a publish laid out otherwise is left to the general path, which reads it as before")
    func otherLayoutsTakeTheGeneralPath() throws {
        let publish = ClientFrame.publish(id: 9, channelType: .user, channel: "bob", message: .string("hi"), customType: "chat")
        var traced = publish
        traced.trace = "request-1"
        // Keys in another order, as another encoder may write them.
        let reordered = packMap([
            ("id", .uint(9)), ("t", .string("publish")), ("channel", .string("bob")), ("channelType", .uint(3)),
            ("message", .string("hi")), ("customType", .string("chat")),
        ])
        let unknownKey = packMap([
            ("t", .string("publish")), ("id", .uint(9)), ("channelType", .uint(3)), ("channel", .string("bob")),
            ("message", .string("hi")), ("later", .bool(true)),
        ])
        for bytes in [traced.encode(), reordered, unknownKey] {
            #expect(bytes.withUnsafeBufferPointer { HotPublish.decode($0) } == nil)
            let served = try Self.served(bytes).get()
            #expect(served == (try Self.general(bytes).get()))
        }
        #expect(try Self.served(reordered).get() == publish)
        #expect(try Self.served(traced.encode()).get().trace == "request-1")
    }

    @Test("a bad publish gets the general path's error: stream channel type, bad UTF-8, trailing bytes, cut short")
    func badPublishesGetTheGeneralPathsErrors() throws {
        let good = ClientFrame.publish(id: 4, channelType: .message, channel: "room", message: .string("hello")).encode()
        var stream = good
        // "channelType" is followed by fixint 1 (message); 2 is a stream channel.
        let typeAt = try #require(good.indices.dropFirst().first { good[$0] == 0x01 && good[$0 - 1] == UInt8(ascii: "e") })
        stream[typeAt] = 2
        var badUTF8 = good
        badUTF8[try #require(indexOf("room", in: good))] = 0xff
        let cases: [(String, [UInt8])] = [
            ("stream channel type", stream), ("bad UTF-8", badUTF8), ("trailing bytes", good + [0xc0]),
            ("cut short", Array(good.dropLast())),
        ]
        for (name, bytes) in cases {
            #expect(bytes.withUnsafeBufferPointer { HotPublish.decode($0) } == nil, "\(name)")
            let served = Self.served(bytes)
            #expect(served == Self.general(bytes), "\(name)")
            guard case .failure(let error) = served else {
                Issue.record("\(name) was decoded")
                continue
            }
            #expect(error.requestId == 4 || name == "cut short", "\(name): \(error)")
        }
        if case .failure(let error) = Self.served(stream) { #expect(error.errorCode == .invalidChannelType) }
    }

    @Test("20,000 mutated publishes: the server's decoding and the general path agree byte for byte")
    func mutatedPublishesAgree() async {
        var random = SeededGenerator(seed: 0x484f_5450_5542)
        let small = Self.clientPublishes.map { $0.encode() }.filter { $0.count < 512 }
        var readInOnePass = 0
        for round in 0..<20_000 {
            await SharedExecutor.yield(atStep: round, every: 1_000)
            var bytes = small[Int(random.next() % UInt64(small.count))]
            // One to three bytes changed, or the frame cut, or a byte added.
            switch random.next() % 4 {
            case 0: bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count))))
            case 1: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: Int(random.next() % UInt64(bytes.count + 1)))
            default:
                for _ in 0...(random.next() % 3) {
                    bytes[Int(random.next() % UInt64(min(bytes.count, 48)))] = UInt8(truncatingIfNeeded: random.next())
                }
            }
            if bytes.withUnsafeBufferPointer({ HotPublish.decode($0) }) != nil { readInOnePass += 1 }
            #expect(Self.served(bytes) == Self.general(bytes), "\(bytes)")
        }
        // Some mutations keep the layout (an id, a payload byte): the one pass still reads them.
        #expect(readInOnePass > 200)
    }

    private func indexOf(_ text: String, in bytes: [UInt8]) -> Int? {
        let needle = Array(text.utf8)
        return bytes.indices.first { bytes[$0...].starts(with: needle) }
    }
}

/// A MessagePack map of `entries` in the order given.
private func packMap(_ entries: [(String, MessagePackValue)]) -> [UInt8] {
    var writer = MessagePackWriter()
    writer.writeMapHeader(entries.count)
    for (key, value) in entries {
        writer.writeString(key)
        writer.writeValue(value)
    }
    return writer.bytes
}
