import Testing
import SwitchboardCore
import SwitchboardWire

/// Every lock request, answer and push round-trips; defaults, refusals and field names as
/// PROTOCOL.md §14 gives them.
@Suite("Lock frames", .timeLimit(.minutes(2)))
struct LockWireTests {
    static let room = LockAddress(.message, "room", "L")
    static let stream = LockAddress(.stream, "ストリーム", "🔒")

    static let requests: [ClientFrame] = [
        .lock(id: 1, .setLock(room, ttl: 10)), .lock(id: 2, .setLock(stream, ttl: nil)),
        .lock(id: 3, .setLock(room, ttl: 300)),
        .lock(id: 4, .removeLock(room)),
        .lock(id: 5, .acquireLock(room, retry: false)), .lock(id: 6, .acquireLock(stream, retry: true)),
        .lock(id: 7, .releaseLock(stream)),
        .lock(id: 8, .revokeLock(room, userId: "alice")),
        .lock(id: .max, .getLocks(ChannelAddress(.stream, "s"))),
    ]

    static let details = [
        LockDetail(lockName: "L", owner: "alice", ttl: 10, fencingToken: 7),
        LockDetail(lockName: "M", owner: "", ttl: 300, fencingToken: 0),
        LockDetail(lockName: "N", owner: "ユーザー", ttl: 60, fencingToken: .max),
    ]

    static let answers: [ServerFrame] = [
        .answer(id: 1, .lock(.acquire(.acquired(fencingToken: 1)))),
        .answer(id: 2, .lock(.acquire(.acquired(fencingToken: .max)))),
        .answer(id: 3, .lock(.acquire(.queued))),
        .answer(id: 4, .lock(.locks([]))),
        .answer(id: 5, .lock(.locks(details))),
    ]

    static let pushes: [Push] = RtmLockEventType.allCases.map { type in
        .lock(.event(LockEventDelivery(channel: ChannelAddress(.message, "room"), eventType: type, locks: details, timestamp: 1_764_400_000_123)))
    } + [
        .lock(.event(LockEventDelivery(channel: ChannelAddress(.stream, "s"), eventType: .snapshot, locks: [], timestamp: 0))),
        .lock(.granted(room, fencingToken: 42)),
        .lock(.waitFailed(stream, code: .lockNotExist, reason: "🔒 was removed while waiting for it")),
        .lock(.waitFailed(room, code: .lockAcquireFailed, reason: "")),
    ]

    @Test("every lock request round-trips", arguments: requests)
    func requestRoundTrip(frame: ClientFrame) throws {
        #expect(try ClientFrame.decode(frame.encode()) == frame)
        #expect(try MessagePackValue.decode(frame.encode())["t"] == .string(frame.type))
    }

    @Test("every lock answer round-trips", arguments: answers)
    func answerRoundTrip(frame: ServerFrame) throws {
        let encoded = frame.encode()
        #expect(try ServerFrame.decode(encoded) == frame)
        let value = try MessagePackValue.decode(encoded)
        #expect(value["t"] == .string("ok"))
        #expect(value["result"]?.stringValue == (frame.lockAnswer.map { if case .acquire = $0 { "acquireLock" } else { "getLocks" } }))
    }

    @Test("every lock push round-trips and encodes once", arguments: pushes)
    func pushRoundTrip(push: Push) throws {
        let encoded = Wire.encodePush(push)
        #expect(encoded == ServerFrame.push(push).encode())
        #expect(try ServerFrame.decode(encoded) == .push(push))
        #expect(try MessagePackValue.decode(encoded)["id"] == nil)
    }

    @Test func fieldsHaveTheDocumentedNames() throws {
        let set = try MessagePackValue.decode(ClientFrame.lock(id: 1, .setLock(Self.room, ttl: 30)).encode())
        #expect(set == map([
            "t": .string("setLock"), "id": .uint(1), "channelType": .uint(1), "channel": .string("room"),
            "lockName": .string("L"), "ttl": .uint(30),
        ]))
        let queued = try MessagePackValue.decode(ServerFrame.answer(id: 2, .lock(.acquire(.queued))).encode())
        #expect(queued == map(["t": .string("ok"), "id": .uint(2), "result": .string("acquireLock"), "acquired": .bool(false)]))
        let event = try MessagePackValue.decode(Wire.encodePush(.lock(.event(LockEventDelivery(
            channel: ChannelAddress(.stream, "s"), eventType: .lockAcquired, locks: [Self.details[0]], timestamp: 5)))))
        #expect(event == map([
            "t": .string("lockEvent"), "channelType": .uint(2), "channel": .string("s"), "eventType": .uint(4),
            "locks": .array([map(["lockName": .string("L"), "owner": .string("alice"), "ttl": .uint(10), "fencingToken": .uint(7)])]),
            "timestamp": .uint(5),
        ]))
        let failed = try MessagePackValue.decode(Wire.encodePush(.lock(.waitFailed(Self.room, code: .lockNotExist, reason: "gone"))))
        #expect(failed == map([
            "t": .string("lockWaitFailed"), "channelType": .uint(1), "channel": .string("room"), "lockName": .string("L"),
            "code": .int(-14008), "reason": .string("gone"),
        ]))
    }

    @Test func aMetadataWriteUnderALockCarriesItsFencingToken() throws {
        let write = ClientFrame.storage(id: 3, .writeChannel(
            .update, channelType: .stream, channel: "s", data: Metadata(items: [MetadataItem(key: "k", value: "v")]),
            options: MetadataOptions(fencingToken: 42), lock: "L"))
        #expect(try ClientFrame.decode(write.encode()) == write)
        #expect(try MessagePackValue.decode(write.encode())["fencingToken"] == .uint(42))
        let plain = ClientFrame.storage(id: 4, .writeChannel(
            .set, channelType: .message, channel: "c", data: Metadata(), options: MetadataOptions(), lock: "L"))
        #expect(try MessagePackValue.decode(plain.encode())["fencingToken"] == nil)
    }

    @Test func optionalFieldsTakeTheirDefaults() throws {
        let acquire = pack(map([
            "t": .string("acquireLock"), "id": .uint(1), "channelType": .uint(2), "channel": .string("c"), "lockName": .string("L"),
        ]))
        #expect(try ClientFrame.decode(acquire) == .lock(id: 1, .acquireLock(LockAddress(.stream, "c", "L"), retry: false)))
        let set = pack(map([
            "t": .string("setLock"), "id": .uint(2), "channelType": .uint(1), "channel": .string("c"), "lockName": .string("L"),
        ]))
        #expect(try ClientFrame.decode(set) == .lock(id: 2, .setLock(LockAddress(.message, "c", "L"), ttl: nil)))
        // A free lock's detail may leave out owner and fencingToken.
        let answer = pack(map([
            "t": .string("ok"), "id": .uint(3), "result": .string("getLocks"),
            "locks": .array([map(["lockName": .string("L"), "ttl": .uint(10)])]),
        ]))
        #expect(try ServerFrame.decode(answer) == .answer(id: 3, .lock(.locks([LockDetail(lockName: "L", owner: "", ttl: 10, fencingToken: 0)]))))
    }

    @Test func badLockRequestsAreRefusedWithTheirCodes() throws {
        let userChannel = pack(map([
            "t": .string("setLock"), "id": .uint(4), "channelType": .uint(3), "channel": .string("bob"), "lockName": .string("L"),
        ]))
        let error = wireError { () throws(WireError) in try ClientFrame.decode(userChannel) }
        #expect(error?.errorCode == .invalidChannelType)
        #expect(error?.requestId == 4)
        let noLockName = pack(map(["t": .string("releaseLock"), "id": .uint(5), "channelType": .uint(1), "channel": .string("c")]))
        #expect(wireError { () throws(WireError) in try ClientFrame.decode(noLockName) }?.errorCode == .invalidParameter)
        let noUser = pack(map([
            "t": .string("revokeLock"), "id": .uint(6), "channelType": .uint(1), "channel": .string("c"), "lockName": .string("L"),
        ]))
        #expect(wireError { () throws(WireError) in try ClientFrame.decode(noUser) }?.key == nil)
        #expect(wireError { () throws(WireError) in try ClientFrame.decode(noUser) }?.reason == "missing required key \"userId\"")
        let negativeTTL = pack(map([
            "t": .string("setLock"), "id": .uint(7), "channelType": .uint(1), "channel": .string("c"), "lockName": .string("L"),
            "ttl": .int(-1),
        ]))
        #expect(wireError { () throws(WireError) in try ClientFrame.decode(negativeTTL) }?.errorCode == .invalidParameter)
        let retryNotBool = pack(map([
            "t": .string("acquireLock"), "id": .uint(8), "channelType": .uint(1), "channel": .string("c"), "lockName": .string("L"),
            "retry": .uint(1),
        ]))
        #expect(wireError { () throws(WireError) in try ClientFrame.decode(retryNotBool) }?.key == "retry")
        let unknownEvent = pack(map([
            "t": .string("lockEvent"), "channelType": .uint(1), "channel": .string("c"), "eventType": .uint(9),
            "locks": .array([]), "timestamp": .uint(0),
        ]))
        #expect(wireError { () throws(WireError) in try ServerFrame.decode(unknownEvent) }?.key == "eventType")
    }

    static let detail = LockDetail(lockName: "L", owner: "alice", ttl: 30, fencingToken: 1)
    static let roomChannel = ChannelAddress(.message, "room")

    /// The lock examples of PROTOCOL.md §14.8, as the Swift encoder writes them.
    static let documented: [([UInt8], String)] = [
        (ClientFrame.lock(id: 6, .setLock(LockAddress(roomChannel, "L"), ttl: 30)).encode(),
         "86a174a77365744c6f636ba2696406ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da86c6f636b4e616d65a14ca374746c1e"),
        (ClientFrame.lock(id: 7, .acquireLock(LockAddress(roomChannel, "L"), retry: true)).encode(),
         "86a174ab616371756972654c6f636ba2696407ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da86c6f636b4e616d65a14ca5"
         + "7265747279c3"),
        (ServerFrame.answer(id: 7, .lock(.acquire(.acquired(fencingToken: 1)))).encode(),
         "85a174a26f6ba2696407a6726573756c74ab616371756972654c6f636ba86163717569726564c3ac66656e63696e67546f6b656e01"),
        (ServerFrame.answer(id: 8, .lock(.acquire(.queued))).encode(),
         "84a174a26f6ba2696408a6726573756c74ab616371756972654c6f636ba86163717569726564c2"),
        (ServerFrame.answer(id: 9, .lock(.locks([detail]))).encode(),
         "84a174a26f6ba2696409a6726573756c74a86765744c6f636b73a56c6f636b739184a86c6f636b4e616d65a14ca56f776e6572a5616c69"
         + "6365a374746c1eac66656e63696e67546f6b656e01"),
        (Wire.encodePush(.lock(.event(LockEventDelivery(channel: roomChannel, eventType: .lockAcquired, locks: [detail], timestamp: 1_764_400_000_123)))),
         "86a174a96c6f636b4576656e74ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da96576656e745479706504a56c6f636b73"
         + "9184a86c6f636b4e616d65a14ca56f776e6572a5616c696365a374746c1eac66656e63696e67546f6b656e01a974696d657374616d70cf"
         + "0000019ace6f6c7b"),
        (Wire.encodePush(.lock(.granted(LockAddress(roomChannel, "L"), fencingToken: 2))),
         "85a174ab6c6f636b4772616e746564ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da86c6f636b4e616d65a14cac6665"
         + "6e63696e67546f6b656e02"),
        (Wire.encodePush(.lock(.waitFailed(LockAddress(roomChannel, "L"), code: .lockNotExist, reason: "L was removed"))),
         "86a174ae6c6f636b576169744661696c6564ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da86c6f636b4e616d65a14c"
         + "a4636f6465d1c948a6726561736f6ead4c207761732072656d6f766564"),
    ]

    @Test("the lock examples of PROTOCOL.md are what the encoder writes", arguments: 0..<documented.count)
    func documentedExample(index: Int) {
        #expect(hex(Self.documented[index].0) == Self.documented[index].1)
    }
}
