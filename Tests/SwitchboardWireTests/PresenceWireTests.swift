import Testing
import SwitchboardCore
import SwitchboardWire

@Suite("Presence frames", .timeLimit(.minutes(2)))
struct PresenceWireTests {
    static let room = ChannelAddress(.message, "room")
    static let stage = ChannelAddress(.stream, "ステージ")

    static let requests: [ClientFrame] = [
        .whoNow(id: 1, channel: room),
        .whoNow(id: 2, channel: stage, includeUserId: false, includeState: true, page: "p2s"),
        .whereNow(id: 3, userId: "alice"),
        .setState(id: 4, channel: room, items: [StateItem(key: "mood", value: "🙂"), StateItem(key: "score", value: "")]),
        .getState(id: 5, channel: stage, userId: "bob"),
        .removeState(id: 6, channel: room, keys: ["mood"]),
        .removeState(id: 7, channel: room, keys: []),
        .getUserPresence(id: 8, userIds: ["alice", "bob"]),
        .getUserPresence(id: 9, userIds: []),
    ]

    @Test("every presence request round-trips", arguments: requests)
    func requestRoundTrip(frame: ClientFrame) throws {
        #expect(try ClientFrame.decode(frame.encode()) == frame)
    }

    static let answers: [ServerFrame] = [
        .answer(id: 1, .presence(.whoNow(WhoNowPage(
            totalOccupancy: 2, users: [UserState(userId: "alice", states: ["a": "1", "b": "2"]), UserState(userId: "bob")],
            nextPage: "p1")))),
        .answer(id: 2, .presence(.whoNow(WhoNowPage(totalOccupancy: 12_000, users: [], nextPage: "")))),
        .answer(id: 3, .presence(.whereNow([room, stage]))),
        .answer(id: 4, .presence(.whereNow([]))),
        .answer(id: 5, .presence(.getState(UserState(userId: "bob", states: ["k": "v"])))),
        .answer(id: 6, .presence(.getUserPresence([
            UserPresence(userId: "alice", online: true, lastSeen: 1_764_400_000_123),
            UserPresence(userId: "bob", online: false, lastSeen: 0),
        ]))),
    ]

    @Test("every presence answer round-trips", arguments: answers)
    func answerRoundTrip(frame: ServerFrame) throws {
        #expect(try ServerFrame.decode(frame.encode()) == frame)
    }

    static let events: [PresenceDelivery] = [
        PresenceDelivery(
            type: .snapshot, channelType: .message, channelName: "room", publisher: "carol",
            snapshot: [UserState(userId: "alice", states: ["a": "1"]), UserState(userId: "carol")], more: true,
            totalOccupancy: 700, timestamp: 1),
        PresenceDelivery(type: .snapshot, channelType: .stream, channelName: "s", publisher: "q", timestamp: 2),
        PresenceDelivery(
            type: .interval, channelType: .message, channelName: "room", publisher: "",
            interval: PresenceIntervalInfo(
                joinUserList: ["a", "b"], leaveUserList: ["c"], timeoutUserList: ["d"],
                userStateList: [UserState(userId: "e", states: ["k": "v"])], totalOccupancy: 51),
            timestamp: 3),
        PresenceDelivery(
            type: .interval, channelType: .stream, channelName: "s", publisher: "",
            interval: PresenceIntervalInfo(totalOccupancy: 0), more: true, timestamp: 4),
        PresenceDelivery(type: .remoteJoinChannel, channelType: .message, channelName: "room", publisher: "bob", firstOrLast: true, timestamp: 5),
        PresenceDelivery(type: .remoteLeaveChannel, channelType: .message, channelName: "room", publisher: "bob", timestamp: 6),
        PresenceDelivery(type: .remoteConnectionTimeout, channelType: .stream, channelName: "s", publisher: "bob", firstOrLast: true, timestamp: 7),
        PresenceDelivery(
            type: .remoteStateChanged, channelType: .message, channelName: "room", publisher: "bob",
            states: ["mood": "happy", "": "empty key is the server's to refuse"], timestamp: .max),
    ]

    @Test("every presence push round-trips and is encoded once alike", arguments: events)
    func pushRoundTrip(event: PresenceDelivery) throws {
        let bytes = Wire.encodePush(.presence(event))
        #expect(bytes == ServerFrame.push(.presence(event)).encode())
        #expect(try ServerFrame.decode(bytes).presenceEvent == event)
        #expect(ServerFrame.push(.presence(event)).type == "presence")
        #expect(bytes.count <= event.approximateSize, "approximateSize is an upper bound")
    }

    @Test func aFullPartFitsOneFrame() throws {
        // The most a part holds: users whose whole states reach the per-user limit, up to the budget.
        let limits = Limits()
        let value = String(repeating: "é", count: (limits.presence.stateValueMaxBytes - 64) / 2)
        let user = UserState(userId: String(repeating: "u", count: 64), states: ["k1": value, "k2": value])
        var users: [UserState] = []
        while users.reduce(0, { $0 + $1.approximateSize }) + user.approximateSize <= PresenceSize.partBudget { users.append(user) }
        let event = PresenceDelivery(
            type: .snapshot, channelType: .message, channelName: String(repeating: "c", count: 64),
            publisher: String(repeating: "p", count: 64), states: user.states, snapshot: users, more: true,
            totalOccupancy: .max, timestamp: .max)
        #expect(Wire.encodePush(.presence(event)).count <= Wire.maxFrameSize)
    }

    @Test func presenceRequestsRefuseAUserChannelAndKeepDuplicateKeys() throws {
        let frame = ClientFrame.whoNow(id: 9, channel: ChannelAddress(.user, "bob"))
        let error = wireError { () throws(WireError) in try ClientFrame.decode(frame.encode()) }
        #expect(error?.errorCode == .invalidChannelType)
        #expect(error?.requestId == 9)
        let duplicate = ClientFrame.setState(id: 10, channel: Self.room, items: [StateItem(key: "a", value: "1"), StateItem(key: "a", value: "2")])
        #expect(try ClientFrame.decode(duplicate.encode()) == duplicate, "the module refuses it with presenceStateDuplicateKey")
        let missing = pack(map(["t": .string("getState"), "id": .uint(11), "channelType": .uint(1), "channel": .string("room")]))
        #expect(wireError { () throws(WireError) in try ClientFrame.decode(missing) }?.errorCode == .invalidParameter)
    }
}
