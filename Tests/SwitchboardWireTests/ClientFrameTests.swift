import Testing
import SwitchboardCore
import SwitchboardWire

@Suite("Client frames", .timeLimit(.minutes(2)))
struct ClientFrameTests {
    static let thirtyTwoKiB = (0..<32_768).map { UInt8(truncatingIfNeeded: $0 &* 31) }

    static let frames: [ClientFrame] = [
        .login(id: 1, Login(appId: "app", userId: "alice", token: "", heartbeatInterval: 5, presenceTimeout: 300)),
        .login(id: .max, Login(
            appId: "", userId: "ユーザー🙂", token: String(repeating: "t", count: 300), heartbeatInterval: 0,
            presenceTimeout: 0, resume: ResumeTicket(session: SessionID(.max), secret: "s3cr3t"))),
        .login(id: 2, Login(
            appId: "app", userId: "bob", token: "", heartbeatInterval: 5, presenceTimeout: 30,
            resume: ResumeTicket(session: SessionID(7), secret: "k", received: 1_234_567))),
        .logout(id: 0), .heartbeat(id: 77),
        .renewToken(id: 3, token: "новый"), .renewToken(id: 4, token: ""),
        .subscribe(id: 5, channel: "room-1", features: .defaultFeatures),
        .subscribe(id: 6, channel: "", features: RtmSubscribeChannelFeature(rawValue: .max)),
        .unsubscribe(id: 7, channel: "café"),
        .publish(id: 8, channelType: .message, channel: "room", message: .string("hi"), customType: ""),
        .publish(id: 9, channelType: .user, channel: "bob", message: .string(""), customType: "chat"),
        .publish(id: 10, channelType: .message, channel: "room", message: .binary([]), customType: "🙂"),
        .publish(id: 11, channelType: .message, channel: "room", message: .binary(thirtyTwoKiB), customType: "x"),
        .publish(id: 12, channelType: .user, channel: "b", message: .string(String(repeating: "é", count: 16_384)),
                 customType: ""),
    ]

    @Test("every client frame round-trips", arguments: frames)
    func roundTrip(frame: ClientFrame) throws {
        let encoded = frame.encode()
        #expect(try ClientFrame.decode(encoded) == frame)
        #expect(try ClientFrame.decode(ArraySlice(encoded)) == frame)
        let decoded = try encoded.withUnsafeBytes { raw throws(WireError) in try ClientFrame.decode(raw) }
        #expect(decoded == frame)
    }

    @Test("every frame is a map of string keys with t first", arguments: frames)
    func shape(frame: ClientFrame) throws {
        let value = try MessagePackValue.decode(frame.encode())
        guard case .map(let pairs) = value else {
            Issue.record("not a map")
            return
        }
        #expect(pairs.first?.key == .string("t"))
        #expect(pairs.first?.value == .string(frame.type))
        #expect(value["id"] == .uint(UInt64(frame.id)))
        #expect(pairs.allSatisfy { $0.key.stringValue != nil })
    }

    @Test func unknownKeysAreIgnoredAndOrderDoesNotMatter() throws {
        let encoded = pack(map([
            "future": .array([.map([MessagePackPair(.string("x"), .ext(type: 9, data: [1]))])]),
            "channel": .string("room"), "id": .uint(42), "features": .uint(4), "t": .string("subscribe"),
            "zzz": .nil,
        ]))
        #expect(try ClientFrame.decode(encoded) == .subscribe(id: 42, channel: "room", features: .message))
    }

    @Test(arguments: [1, 15, 16, 17, 40])
    func aRepeatedKeyTakesItsLastValueHoweverManyEntriesTheMapHas(repeats: Int) throws {
        // Up to 16 known keys are found in one pass over the map, more in a second one: both
        // read the same frame, and a bad value is reported under its key either way.
        var pairs = [MessagePackPair(.string("t"), .string("publish")), MessagePackPair(.string("id"), .uint(7))]
        for index in 0..<repeats { pairs.append(MessagePackPair(.string("channel"), .string("c\(index)"))) }
        pairs += [
            MessagePackPair(.string("channelType"), .uint(3)), MessagePackPair(.string("message"), .string("hi")),
        ]
        #expect(try ClientFrame.decode(pack(.map(pairs)))
                == .publish(id: 7, channelType: .user, channel: "c\(repeats - 1)", message: .string("hi"), customType: ""))
        pairs.append(MessagePackPair(.string("customType"), .uint(1)))
        let bad = pack(.map(pairs))
        let failure = wireError { () throws(WireError) in try ClientFrame.decode(bad) }
        #expect(failure?.key == "customType" && failure?.requestId == 7 && failure?.messageType == "publish")
    }

    @Test func publishCustomTypeDefaultsToEmpty() throws {
        let encoded = pack(map([
            "t": .string("publish"), "id": .uint(1), "channelType": .uint(1), "channel": .string("c"),
            "message": .binary([1, 2]),
        ]))
        #expect(try ClientFrame.decode(encoded)
                == .publish(id: 1, channelType: .message, channel: "c", message: .binary([1, 2]), customType: ""))
    }

    @Test func integersInWiderEncodingsAreAccepted() throws {
        // id as uint32, features as int64: any encoding that fits is fine.
        let encoded = bytes(hex: "84 a174 a9737562736372696265 a26964 ce0000002a a76368616e6e656c a163 a86665617475726573 d30000000000000005")
        #expect(try ClientFrame.decode(encoded) == .subscribe(id: 42, channel: "c", features: [.presence, .message]))
    }
}
