import Testing
import SwitchboardCore
import SwitchboardWire

@Suite("Frame decoding errors", .timeLimit(.minutes(2)))
struct FrameErrorTests {
    func clientError(_ value: MessagePackValue) -> WireError? {
        wireError { () throws(WireError) in try ClientFrame.decode(pack(value)) }
    }

    @Test("every truncation of every frame throws", arguments: ClientFrameTests.frames.prefix(10))
    func truncatedClientFrames(frame: ClientFrame) {
        let encoded = frame.encode()
        for length in 0..<encoded.count {
            #expect(wireError { () throws(WireError) in try ClientFrame.decode(encoded[0..<length]) } != nil)
        }
    }

    @Test("every truncation of every server frame throws", arguments: ServerFrameTests.frames.prefix(9))
    func truncatedServerFrames(frame: ServerFrame) {
        let encoded = frame.encode()
        for length in 0..<encoded.count {
            #expect(wireError { () throws(WireError) in try ServerFrame.decode(encoded[0..<length]) } != nil)
        }
    }

    @Test func missingKeyNamesTheKeyAndCarriesTheRequestId() {
        let error = clientError(map(["t": .string("subscribe"), "id": .uint(9), "features": .uint(1)]))
        #expect(error?.kind == .missingKey("channel"))
        #expect(error?.requestId == 9)
        #expect(error?.messageType == "subscribe")
        #expect(error?.errorCode == .invalidParameter)
        #expect(error?.description == "wire error at byte 0 in \"subscribe\" (request 9): missing required key \"channel\"")
    }

    @Test func wrongTypeNamesTheKey() {
        let error = clientError(map(["t": .string("unsubscribe"), "id": .uint(3), "channel": .uint(5)]))
        #expect(error?.kind == .typeMismatch(expected: "string", found: "integer"))
        #expect(error?.key == "channel")
        #expect(error?.requestId == 3)
    }

    @Test func missingTypeOrIdOrUnknownType() {
        #expect(clientError(map(["id": .uint(3)]))?.kind == .missingKey("t"))
        #expect(clientError(map(["id": .uint(3)]))?.requestId == 3)
        #expect(clientError(map(["t": .string("logout")]))?.kind == .missingKey("id"))
        let unknown = clientError(map(["t": .string("teleport"), "id": .uint(4)]))
        #expect(unknown?.kind == .unknownMessageType("teleport"))
        #expect(unknown?.requestId == 4)
        #expect(clientError(map(["t": .uint(1), "id": .uint(4)]))?.key == "t")
    }

    @Test func badIdsAreReportedWithoutAnId() {
        for bad: MessagePackValue in [.int(-1), .uint(UInt64(UInt32.max) + 1), .string("1"), .nil] {
            let error = clientError(map(["t": .string("logout"), "id": bad]))
            #expect(error?.key == "id")
            #expect(error?.requestId == nil)
        }
    }

    @Test func errorAfterTheIdStillCarriesIt() {
        // The id is read, then a later value is truncated.
        let encoded = Array(ClientFrame.unsubscribe(id: 5, channel: "room").encode().dropLast())
        #expect(wireError { () throws(WireError) in try ClientFrame.decode(encoded) }?.requestId == 5)
    }

    @Test func nonMapsAndNonStringKeysAreRefused() {
        #expect(clientError(.array([.string("t")]))?.kind == .typeMismatch(expected: "map", found: "array"))
        let intKey = MessagePackValue.map([MessagePackPair(.uint(1), .string("x"))])
        #expect(clientError(intKey)?.kind == .nonStringKey)
    }

    @Test func publishChecksChannelTypeAndMessage() {
        for raw: Int64 in [0, 2, 4, -1] {
            let error = clientError(map([
                "t": .string("publish"), "id": .uint(1), "channelType": .int(raw), "channel": .string("c"),
                "message": .string("m"),
            ]))
            #expect(error?.kind == .invalidChannelType(Int(raw)))
            #expect(error?.errorCode == .invalidChannelType)
        }
        let numeric = clientError(map([
            "t": .string("publish"), "id": .uint(1), "channelType": .uint(1), "channel": .string("c"),
            "message": .uint(5),
        ]))
        #expect(numeric?.kind == .typeMismatch(expected: "string or binary", found: "integer"))
    }

    @Test func loginResumeNeedsBothFields() {
        let error = clientError(map([
            "t": .string("login"), "id": .uint(1), "appId": .string("a"), "userId": .string("u"),
            "token": .string(""), "heartbeatInterval": .uint(5), "presenceTimeout": .uint(30),
            "resumeSession": .uint(4),
        ]))
        guard case .invalidValue = error?.kind else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(error?.requestId == 1)
    }

    @Test func negativeDurationsAreRefused() {
        let error = clientError(map([
            "t": .string("login"), "id": .uint(1), "appId": .string("a"), "userId": .string("u"),
            "token": .string(""), "heartbeatInterval": .int(-5), "presenceTimeout": .uint(30),
        ]))
        #expect(error?.key == "heartbeatInterval")
    }

    @Test func invalidUTF8InAnyStringIsRefused() {
        var writer = MessagePackWriter()
        writer.writeMapHeader(3)
        writer.writeString("t"); writer.writeString("unsubscribe")
        writer.writeString("id"); writer.writeUInt(2)
        writer.writeString("channel")
        writer.bytes += [0xa2, 0xc3, 0x28]
        #expect(wireError { () throws(WireError) in try ClientFrame.decode(writer.bytes) }?.kind == .invalidUTF8)
        // An unknown key with invalid UTF-8 is refused too.
        var badKey = MessagePackWriter()
        badKey.writeMapHeader(3)
        badKey.writeString("t"); badKey.writeString("logout")
        badKey.writeString("id"); badKey.writeUInt(2)
        badKey.bytes += [0xa1, 0xff, 0xc0]
        #expect(wireError { () throws(WireError) in try ClientFrame.decode(badKey.bytes) }?.kind == .invalidUTF8)
    }

    @Test func deepNestingInAnIgnoredValueIsRefused() {
        var writer = MessagePackWriter()
        writer.writeMapHeader(3)
        writer.writeString("t"); writer.writeString("logout")
        writer.writeString("id"); writer.writeUInt(2)
        writer.writeString("extra")
        writer.bytes += [UInt8](repeating: 0x91, count: 10_000) + [0xc0]
        let error = wireError { () throws(WireError) in try ClientFrame.decode(writer.bytes) }
        #expect(error?.kind == .nestingTooDeep(limit: 32))
        #expect(error?.requestId == 2)
    }

    @Test func hugeDeclaredLengthsAreRefused() {
        var writer = MessagePackWriter()
        writer.writeMapHeader(3)
        writer.writeString("t"); writer.writeString("publish")
        writer.writeString("id"); writer.writeUInt(2)
        writer.writeString("message")
        writer.bytes += [0xc6, 0xff, 0xff, 0xff, 0xff, 1, 2, 3]
        let error = wireError { () throws(WireError) in try ClientFrame.decode(writer.bytes) }
        #expect(error?.kind == .lengthExceedsInput(declared: Int(UInt32.max), remaining: 3))
        #expect(clientError(.nil)?.kind == .typeMismatch(expected: "map", found: "nil"))
        #expect(wireError { () throws(WireError) in try ClientFrame.decode(bytes(hex: "dfffffffff")) }?.kind
                == .lengthExceedsInput(declared: Int(UInt32.max), remaining: 0))
    }

    @Test func trailingBytesAreRefused() {
        let encoded = ClientFrame.heartbeat(id: 1).encode() + [0xc0]
        #expect(wireError { () throws(WireError) in try ClientFrame.decode(encoded) }?.kind == .trailingBytes(1))
    }
}
