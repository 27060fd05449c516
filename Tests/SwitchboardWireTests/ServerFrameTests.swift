import Testing
import SwitchboardCore
import SwitchboardWire

@Suite("Server frames", .timeLimit(.minutes(2)))
struct ServerFrameTests {
    static func delivery(_ payload: MessagePayload, type: RtmChannelType = .message) -> MessageDelivery {
        MessageDelivery(
            channelType: type, channelName: "room", payload: payload, publisher: "alice", customType: "",
            timestamp: 1_764_400_000_123)
    }

    static let frames: [ServerFrame] = [
        .ok(id: 0), .ok(id: .max),
        .loginOk(id: 1, LoginAccepted(
            ticket: ResumeTicket(session: SessionID(7), secret: "abc"), resumed: false,
            heartbeatInterval: 5, presenceTimeout: 300, loss: .none)),
        .loginOk(id: 2, LoginAccepted(
            ticket: ResumeTicket(session: SessionID(.max), secret: ""), resumed: true,
            heartbeatInterval: 0, presenceTimeout: 0,
            loss: ResumeLoss(droppedPushes: 1_234, channels: [ChannelAddress(.message, "room"), ChannelAddress(.user, "bob"),
                                                              ChannelAddress(.stream, "ストリーム")]))),
        .error(id: 3, RtmError(.channelReceiverOffline, operation: "publish", reason: "bob is offline")),
        .error(id: 4, RtmError(.invalidParameter, operation: "", reason: "")),
        .message(delivery(.string("hi"))),
        .message(delivery(.string(""), type: .user)),
        .message(delivery(.binary([]))),
        .message(delivery(.binary(ClientFrameTests.thirtyTwoKiB))),
        .message(MessageDelivery(
            channelType: .stream, channelName: "s", channelTopic: "t🙂", payload: .string("ü"), publisher: "p",
            customType: "c", timestamp: 0)),
        .push(.session(.tokenPrivilegeWillExpire(secondsLeft: 30))), .push(.session(.tokenPrivilegeWillExpire(secondsLeft: 0))),
        .push(.session(.tokenPrivilegeWillExpire(secondsLeft: 29, channel: "live"))),
        .push(.session(.messagesMayBeLost(channelType: .message, channel: "room"))),
        .push(.session(.messagesMayBeLost(channelType: .user, channel: "alice"))),
        .closing(reason: .sameUidLogin, detail: "logged in elsewhere"), .closing(reason: .unknown, detail: ""),
    ]

    @Test("every server frame round-trips", arguments: frames)
    func roundTrip(frame: ServerFrame) throws {
        let encoded = frame.encode()
        #expect(try ServerFrame.decode(encoded) == frame)
        let value = try MessagePackValue.decode(encoded)
        #expect(value["t"] == .string(frame.type))
        #expect(value["id"]?.int64Value == frame.requestId.map(Int64.init))
    }

    @Test("a push encodes to the same bytes as its frame", arguments: frames.compactMap(\.pushed))
    func pushFastPath(push: Push) throws {
        #expect(Wire.encodePush(push) == ServerFrame.push(push).encode())
        #expect(try ServerFrame.decode(Wire.encodePush(push)) == .push(push))
    }

    @Test func theOkAnswerWrittenInPlaceIsTheEncodedAnswer() {
        for id: UInt32 in [0, 1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x1_0000, .max] {
            var written = [UInt8](repeating: 0, count: ServerFrame.okAnswerSize(id: id))
            written.withUnsafeMutableBytes { ServerFrame.writeOkAnswer(id: id, into: $0) }
            #expect(written == ServerFrame.answer(id: id, .done).encode())
        }
    }

    @Test("a message push leaves out an empty topic and an empty custom type, and reads back the same")
    func anEmptyTopicAndCustomTypeAreLeftOut() throws {
        /// The keys of the encoded push, in order.
        func keys(_ delivery: MessageDelivery) throws -> [String] {
            guard case .map(let pairs) = try MessagePackValue.decode(Wire.encodePush(.message(delivery))) else { return [] }
            return pairs.compactMap { if case .string(let key) = $0.key { key } else { nil } }
        }
        let plain = Self.delivery(.string("hi"))
        #expect(try keys(plain) == ["t", "channelType", "channel", "message", "publisher", "timestamp"])
        let typed = MessageDelivery(
            channelType: .user, channelName: "alice", payload: .string("hi"), publisher: "alice", customType: "c", timestamp: 1)
        #expect(try keys(typed) == ["t", "channelType", "channel", "message", "publisher", "customType", "timestamp"])
        let topical = MessageDelivery(
            channelType: .stream, channelName: "s", channelTopic: "t", payload: .string("hi"), publisher: "p", customType: "", timestamp: 1)
        #expect(try keys(topical) == ["t", "channelType", "channel", "topic", "message", "publisher", "timestamp"])
        for delivery in [plain, typed, topical] {
            #expect(try ServerFrame.decode(Wire.encodePush(.message(delivery))) == .message(delivery))
            #expect(Wire.encodedSize(of: .message(delivery)) == Wire.encodePush(.message(delivery)).count)
        }
    }

    @Test("a message written into memory of its exact size is its encoded push", arguments: [
        delivery(.binary(ClientFrameTests.thirtyTwoKiB)), delivery(.string("")), delivery(.binary([]), type: .user),
        MessageDelivery(
            channelType: .stream, channelName: String(repeating: "é", count: 64), channelTopic: String(repeating: "t", count: 300),
            payload: .string(String(repeating: "ß", count: 40_000)), publisher: String(repeating: "p", count: 64),
            customType: String(repeating: "c", count: 32), timestamp: .max),
    ])
    func aMessageEncodesIntoMemoryOfItsExactSize(delivery: MessageDelivery) throws {
        let push = Push.message(delivery)
        let size = try #require(Wire.encodedSize(of: push))
        let written = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = Wire.encodePush(push, into: UnsafeMutableRawBufferPointer(buffer))
        }
        #expect(written == Wire.encodePush(push))
        #expect(written.count == size)
        #expect(Wire.encodedSize(of: .session(.tokenPrivilegeWillExpire(secondsLeft: 30))) == nil)
    }

    @Test func unknownClosingReasonBecomesUnknown() throws {
        let encoded = pack(map(["t": .string("closing"), "reason": .uint(999), "detail": .string("?")]))
        #expect(try ServerFrame.decode(encoded) == .closing(reason: .unknown, detail: "?"))
    }

    @Test func unknownErrorCodeIsRefused() {
        let encoded = pack(map(["t": .string("error"), "id": .uint(1), "code": .int(-1),
                                "operation": .string("x"), "reason": .string("y")]))
        let error = wireError { () throws(WireError) in try ServerFrame.decode(encoded) }
        #expect(error?.key == "code")
        #expect(error?.requestId == 1)
    }
}

@Suite("Extension frames", .timeLimit(.minutes(2)))
struct ExtensionFrameTests {
    @Test func extensionCallsAnswersAndPushesRoundTrip() throws {
        let call = ClientFrame(id: 9, .extension(ExtensionOperation("announce", body: .binary([1, 2]))))
        #expect(try ClientFrame.decode(call.encode()) == call)
        #expect(call.type == "x.announce")
        for answer in [ExtensionAnswer("announce", body: .string("2")), ExtensionAnswer("announce", body: nil)] {
            let frame = ServerFrame.answer(id: 9, .extension(answer))
            #expect(try ServerFrame.decode(frame.encode()) == frame)
        }
        let push = ServerFrame.push(.extension(ExtensionPush(name: "announcement", body: .string("hi"))))
        #expect(try ServerFrame.decode(push.encode()) == push)
        #expect(try MessagePackValue.decode(push.encode())["t"] == .string("x.announcement"))
    }

    @Test func aCallWithoutBodyHasAnEmptyOne() throws {
        let encoded = pack(map(["t": .string("x.ping"), "id": .uint(3)]))
        #expect(try ClientFrame.decode(encoded) == ClientFrame(id: 3, .extension(ExtensionOperation("ping"))))
    }
}
