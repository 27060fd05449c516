import Testing
import SwitchboardCore
@testable import SwitchboardWire

@Suite(.timeLimit(.minutes(2))) struct NameMatcherTests {
    @Test func namesSharingALengthAndTheLowBitsOfTheirFirstByteAreToldApart() {
        // "a", "A" and "!" share their low five bits (1), so these names share one slot.
        let names = ["ab", "Ab", "!b", "ac", "abc", "b"]
        let matcher = NameMatcher(names.enumerated().map { (value: $0.offset, name: $0.element) })
        for (index, name) in names.enumerated() {
            #expect(Array(name.utf8).withUnsafeBufferPointer { matcher.match($0) } == index, "\(name)")
        }
        for stranger in ["Ac", "!c", "a", "abcd", "bb", "", "ab\u{0}"] {
            #expect(Array(stranger.utf8).withUnsafeBufferPointer { matcher.match($0) } == nil, "\(stranger)")
        }
    }

    @Test func aCommonTypeAndAnyOtherTypeReadAsTheirExactString() throws {
        for type in ["publish", "publishTopicMessage", "heartbeat", "subscribe", "unsubscribe", "login", "publis", "publishX", "Publish"] {
            var writer = MessagePackWriter()
            writer.writeString(type)
            var reader = MessagePackReader(writer.bytes)
            #expect(try reader.readFrameType() == type)
            #expect(reader.isAtEnd)
        }
    }

    @Test func aTypeThatIsNotUTF8IsRefused() {
        var reader = MessagePackReader([0xa7, 0x70, 0x75, 0x62, 0x6c, 0x69, 0x73, 0xff])
        #expect(wireError { () throws(WireError) in _ = try reader.readFrameType() }?.kind == .invalidUTF8)
    }

    @Test func aPublishOfTextInAnyScriptDecodesToTheSameText() throws {
        for text in ["", "plain ascii", "héllo wörld", "日本語のテキスト", "emoji 👋🏽 and more", String(repeating: "ü", count: 600)] {
            let frame = ClientFrame.publish(id: 7, channelType: .user, channel: "ünïcode-user", message: .string(text))
            #expect(try ClientFrame.decode(frame.encode()) == frame)
        }
    }
}

@Suite(.timeLimit(.minutes(2))) struct RecordedFieldsTests {
    /// A publish whose map holds `extra` known keys that publish does not use, before its own.
    func publish(withExtraKeys extra: Int) -> [UInt8] {
        let unused: [FrameKey] = Array(FrameKey.allCases.filter { ![.t, .id, .result, .channelType, .channel, .message, .customType].contains($0) }.prefix(extra))
        var writer = MessagePackWriter()
        writer.writeMapHeader(2 + unused.count + 4)
        writer.writeString("t"); writer.writeString("publish")
        writer.writeString("id"); writer.writeUInt(9)
        for key in unused { writer.writeString(key.rawValue); writer.writeNil() }
        writer.writeString("channelType"); writer.writeUInt(UInt64(RtmChannelType.user.rawValue))
        writer.writeString("channel"); writer.writeString("bob")
        writer.writeString("customType"); writer.writeString("kind")
        writer.writeString("message"); writer.writeString("hello")
        return writer.bytes
    }

    @Test(arguments: [0, 11, 12, 13, 20, 40])
    func aFrameWithMoreKnownKeysThanAreRecordedDecodesTheSame(extra: Int) throws {
        let expected = ClientFrame.publish(id: 9, channelType: .user, channel: "bob", message: .string("hello"), customType: "kind")
        #expect(try ClientFrame.decode(publish(withExtraKeys: extra)) == expected)
    }
}
