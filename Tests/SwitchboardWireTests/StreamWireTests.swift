import Testing
import SwitchboardCore
import SwitchboardWire

/// Every stream-channel operation, answer and push round-trips, and malformed ones are refused.
@Suite("Stream wire", .timeLimit(.minutes(2)))
struct StreamWireTests {
    static let requests: [ClientFrame] = [
        .stream(id: 1, .join(channel: "live", token: "007abc", features: [.presence, .metadata, .lock, .beQuiet])),
        .stream(id: 2, .join(channel: "ストリーム", token: "", features: [])),
        .stream(id: 3, .leave(channel: "live")),
        .stream(id: 4, .renewChannelToken(channel: "live", token: "006xyz")),
        .stream(id: 5, .joinTopic(channel: "live", topic: "video", options: TopicJoinOptions())),
        .stream(id: 6, .joinTopic(
            channel: "live", topic: "🙂", options: TopicJoinOptions(qos: .ordered, priority: .highest, meta: "cam 1", syncWithMedia: true))),
        .stream(id: 7, .leaveTopic(channel: "live", topic: "video")),
        .stream(id: 8, .publishTopicMessage(channel: "live", topic: "video", message: .string("hi"), customType: "", sendTs: 0)),
        .stream(id: 9, .publishTopicMessage(
            channel: "live", topic: "video", message: .binary([0, 1, 255]), customType: "raw", sendTs: .max)),
        .stream(id: 10, .subscribeTopic(channel: "live", topic: "video", users: nil)),
        .stream(id: 11, .subscribeTopic(channel: "live", topic: "video", users: ["alice", "bob"])),
        .stream(id: 12, .subscribeTopic(channel: "live", topic: "video", users: [])),
        .stream(id: 13, .unsubscribeTopic(channel: "live", topic: "video", users: nil)),
        .stream(id: .max, .unsubscribeTopic(channel: "live", topic: "video", users: ["carol"])),
    ]

    static let answersAndPushes: [ServerFrame] = [
        .subscribeTopicOk(id: 11, TopicSubscription(succeedUsers: ["alice"], failedUsers: ["bob"])),
        .subscribeTopicOk(id: 12, TopicSubscription(succeedUsers: [], failedUsers: [])),
        .push(.topic(TopicEvent(type: .snapshot, channelName: "live", publisher: "bob", topicInfos: [], timestamp: 1))),
        .push(.topic(TopicEvent(
            type: .snapshot, channelName: "live", publisher: "bob",
            topicInfos: [
                TopicInfo(topic: "video", publishers: [TopicPublisher(userId: "alice", meta: "cam"), TopicPublisher(userId: "carol", meta: "")]),
                TopicInfo(topic: "audio", publishers: []),
            ],
            timestamp: 1_764_400_000_123))),
        .push(.topic(TopicEvent(
            type: .remoteJoinTopic, channelName: "live", publisher: "alice",
            topicInfos: [TopicInfo(topic: "video", publishers: [TopicPublisher(userId: "alice", meta: "ü")])], timestamp: 2))),
        .push(.topic(TopicEvent(type: .remoteLeaveTopic, channelName: "l", publisher: "a", topicInfos: [], timestamp: .max))),
        .push(.topic(TopicEvent(type: .snapshot, channelName: "live", publisher: "bob", topicInfos: [], timestamp: 3, more: true))),
        .message(MessageDelivery(
            channelType: .stream, channelName: "live", channelTopic: "video", payload: .binary([1, 2]), publisher: "alice",
            customType: "raw", timestamp: 42)),
    ]

    @Test("every stream request round-trips", arguments: requests)
    func requestRoundTrip(frame: ClientFrame) throws {
        #expect(try ClientFrame.decode(frame.encode()) == frame)
        #expect(try MessagePackValue.decode(frame.encode())["t"] == .string(frame.type))
    }

    @Test("every stream answer and push round-trips", arguments: answersAndPushes)
    func serverRoundTrip(frame: ServerFrame) throws {
        let encoded = frame.encode()
        #expect(try ServerFrame.decode(encoded) == frame)
        if case .push(let push) = frame { #expect(Wire.encodePush(push) == encoded) }
    }

    @Test func theSubscribeAnswerIsAnOkNamedByItsResult() throws {
        let value = try MessagePackValue.decode(
            ServerFrame.subscribeTopicOk(id: 3, TopicSubscription(succeedUsers: ["a"], failedUsers: [])).encode())
        #expect(value["t"] == .string("ok"))
        #expect(value["result"] == .string("subscribeTopic"))
        #expect(value["succeedUsers"] == .array([.string("a")]))
        // A plain ok stays a plain ok.
        #expect(try ServerFrame.decode(pack(map(["t": .string("ok"), "id": .uint(3)]))) == .ok(id: 3))
    }

    @Test func fieldsAreReadByTheirNames() throws {
        let frame = try ClientFrame.decode(pack(map([
            "t": .string("joinTopic"), "id": .uint(5), "channel": .string("live"), "topic": .string("video"), "qos": .uint(1), "priority": .uint(8), "meta": .string("m"),
            "syncWithMedia": .bool(true), "unknown": .string("ignored"),
        ])))
        #expect(frame == .stream(id: 5, .joinTopic(
            channel: "live", topic: "video", options: TopicJoinOptions(qos: .ordered, priority: .low, meta: "m", syncWithMedia: true))))
        let join = try ClientFrame.decode(pack(map(["t": .string("join"), "id": .uint(1), "channel": .string("live"), "features": .uint(1)])))
        #expect(join == .stream(id: 1, .join(channel: "live", token: "", features: [.presence])))
    }

    @Test func malformedStreamRequestsAreInvalidParameters() {
        let bad: [MessagePackValue] = [
            map(["t": .string("joinTopic"), "id": .uint(1), "channel": .string("live")]),
            map(["t": .string("joinTopic"), "id": .uint(1), "channel": .string("live"), "topic": .string("v"), "qos": .uint(2)]),
            map(["t": .string("joinTopic"), "id": .uint(1), "channel": .string("live"), "topic": .string("v"), "priority": .uint(3)]),
            map(["t": .string("join"), "id": .uint(1), "channel": .string("live")]),
            map(["t": .string("leave"), "id": .uint(1)]),
            map(["t": .string("renewChannelToken"), "id": .uint(1), "channel": .string("live")]),
            map(["t": .string("publishTopicMessage"), "id": .uint(1), "channel": .string("live"), "topic": .string("v")]),
            map(["t": .string("subscribeTopic"), "id": .uint(1), "channel": .string("live"), "topic": .string("v"), "users": .string("alice")]),
            map(["t": .string("subscribeTopic"), "id": .uint(1), "channel": .string("live"), "topic": .string("v"), "users": .array([.uint(1)])]),
        ]
        for value in bad {
            let error = wireError { () throws(WireError) in try ClientFrame.decode(pack(value)) }
            #expect(error?.errorCode == .invalidParameter, "\(value)")
            #expect(error?.requestId == 1, "\(value)")
        }
        // A message that is neither a string nor binary data is the reference's channelInvalidMessage.
        let notAMessage = map(["t": .string("publishTopicMessage"), "id": .uint(1), "channel": .string("live"), "topic": .string("v"), "message": .uint(3)])
        let error = wireError { () throws(WireError) in try ClientFrame.decode(pack(notAMessage)) }
        #expect(error?.errorCode == .channelInvalidMessage && error?.requestId == 1)
    }

    @Test func theExamplesOfProtocolSectionElevenEncodeByteForByte() throws {
        let join = ClientFrame.stream(id: 7, .joinTopic(channel: "live", topic: "video", options: TopicJoinOptions(qos: .ordered, meta: "cam")))
        #expect(hex(join.encode()) ==
            "88a174a96a6f696e546f706963a2696407a76368616e6e656ca46c697665a5746f706963a5766964656fa3716f7301a87072696f"
            + "7269747904a46d657461a363616dad73796e63576974684d65646961c2")
        let event = TopicEvent(
            type: .remoteJoinTopic, channelName: "live", publisher: "alice",
            topicInfos: [TopicInfo(topic: "video", publishers: [TopicPublisher(userId: "alice", meta: "cam")])],
            timestamp: 1_764_400_000_123)
        let bytes = Wire.encodePush(.topic(event))
        #expect(hex(bytes) ==
            "86a174a5746f706963a96576656e745479706502a76368616e6e656ca46c697665a97075626c6973686572a5616c696365aa74"
            + "6f706963496e666f739182a5746f706963a5766964656faa7075626c6973686572739182a6757365724964a5616c696365a46d"
            + "657461a363616da974696d657374616d70cf0000019ace6f6c7b")
        #expect(try ServerFrame.decode(bytes) == .push(.topic(event)))
    }

    @Test func aSnapshotInPartsIsJoinedIntoOneWithATopicCutBetweenTwoParts() throws {
        func publisher(_ name: String) -> TopicPublisher { TopicPublisher(userId: name, meta: "m-" + name) }
        func part(_ infos: [TopicInfo], more: Bool, at time: UInt64 = 5) -> TopicEvent {
            TopicEvent(type: .snapshot, channelName: "live", publisher: "bob", topicInfos: infos, timestamp: time, more: more)
        }
        let parts = [
            part([TopicInfo(topic: "audio", publishers: [publisher("a")]), TopicInfo(topic: "video", publishers: [publisher("b")])], more: true),
            part([TopicInfo(topic: "video", publishers: [publisher("c"), publisher("d")])], more: true),
            part([TopicInfo(topic: "video", publishers: [publisher("e")]), TopicInfo(topic: "zoom", publishers: [publisher("f")])], more: false),
        ]
        // An old single-part snapshot has no `more` and decodes as complete.
        let whole = TopicEvent(type: .snapshot, channelName: "live", publisher: "bob", topicInfos: [], timestamp: 5)
        #expect(!Array(Wire.encodePush(.topic(whole))).contains(Array("more".utf8)))
        var assembler = PartAssembler<TopicEvent>()
        // A snapshot whose parts stopped coming is dropped when the next one begins.
        #expect(assembler.add(part([TopicInfo(topic: "stale", publishers: [publisher("x")])], more: true, at: 4)) == nil)
        let decoded = try parts.map { try #require(try ServerFrame.decode(Wire.encodePush(.topic($0))).topicEvent) }
        #expect(decoded == parts)
        let joined = decoded.compactMap { assembler.add($0) }
        #expect(joined == [
            part([
                TopicInfo(topic: "audio", publishers: [publisher("a")]),
                TopicInfo(topic: "video", publishers: ["b", "c", "d", "e"].map(publisher)),
                TopicInfo(topic: "zoom", publishers: [publisher("f")]),
            ], more: false)
        ])
        #expect(assembler.add(whole) == whole)
    }
}
