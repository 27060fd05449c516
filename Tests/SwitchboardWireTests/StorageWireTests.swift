import Testing
import SwitchboardCore
import SwitchboardWire

@Suite("Storage frames", .timeLimit(.minutes(2)))
struct StorageWireTests {
    static let items = [
        MetadataItem(key: "topic", value: "discussion", revision: 174_298_200),
        MetadataItem(key: "ä🙂", value: ""),
        MetadataItem(key: "offer", value: String(repeating: "v", count: 16 * 1024), lease: .timeToLive(milliseconds: 30_000)),
        MetadataItem(key: "seat", value: "3", lease: .session),
    ]
    static let data = Metadata(majorRevision: 174_298_270, items: items)
    static let options = MetadataOptions(recordTs: true, recordUserId: true)

    static let operations: [StorageOperation] = [
        .writeChannel(.set, channelType: .message, channel: "room", data: data, options: options, lock: "manage"),
        .writeChannel(.update, channelType: .stream, channel: "s", data: Metadata(items: [items[0]]), options: MetadataOptions(), lock: nil),
        .writeChannel(.remove, channelType: .message, channel: "room", data: Metadata(), options: MetadataOptions(), lock: ""),
        .getChannel(channelType: .stream, channel: "s"),
        .writeUser(.set, userId: "alice", data: data, options: options),
        .writeUser(.update, userId: "alice", data: Metadata(majorRevision: 3, items: [items[1]]), options: MetadataOptions(recordTs: true)),
        .writeUser(.remove, userId: "bob", data: Metadata(items: [MetadataItem(key: "k")]), options: MetadataOptions()),
        .getUser(userId: "alice"), .subscribeUser(userId: "alice"), .unsubscribeUser(userId: "ユーザー"),
    ]

    static let readItems = [
        MetadataItem(key: "a", value: "1", revision: 9, updateTs: 1_700_000_000_000, authorUserId: "alice"),
        MetadataItem(key: "b", value: "2", revision: 8, expiresAt: 1_700_000_030_000, sessionBound: true),
    ]

    static let serverFrames: [ServerFrame] = [
        .answer(id: 1, .storage(.channelMetadata(Metadata(majorRevision: 9, items: readItems)))),
        .answer(id: 2, .storage(.userMetadata(Metadata(majorRevision: 0, items: [])))),
        .push(.storage(StorageEvent(
            channelType: .message, storageType: .channel, eventType: .update, target: "room",
            data: Metadata(majorRevision: 9, items: readItems), timestamp: 1_700_000_000_001))),
        .push(.storage(StorageEvent(
            channelType: .user, storageType: .user, eventType: .snapshot, target: "alice", data: Metadata(majorRevision: 0),
            timestamp: 5))),
    ]

    @Test("every storage operation round-trips", arguments: operations)
    func roundTrip(operation: StorageOperation) throws {
        let frame = ClientFrame.storage(id: 7, operation)
        #expect(try ClientFrame.decode(frame.encode()) == frame)
        #expect(frame.type == operation.name)
    }

    @Test("every storage answer and push round-trips", arguments: serverFrames)
    func roundTrip(frame: ServerFrame) throws {
        #expect(try ServerFrame.decode(frame.encode()) == frame)
    }

    @Test func operationNamesAreTheReferenceMethodNames() {
        #expect(Self.operations.map(\.name) == [
            "setChannelMetadata", "updateChannelMetadata", "removeChannelMetadata", "getChannelMetadata",
            "setUserMetadata", "updateUserMetadata", "removeUserMetadata", "getUserMetadata",
            "subscribeUserMetadata", "unsubscribeUserMetadata",
        ])
    }

    @Test func aWriteWithOnlyItsKeysHasTheDefaults() throws {
        let encoded = pack(map([
            "t": .string("setUserMetadata"), "id": .uint(3), "userId": .string("alice"),
            "items": .array([map(["key": .string("k"), "value": .string("v")])]),
        ]))
        #expect(try ClientFrame.decode(encoded) == .storage(id: 3, .writeUser(
            .set, userId: "alice", data: Metadata(majorRevision: -1, items: [MetadataItem(key: "k", value: "v")]),
            options: MetadataOptions())))
    }

    @Test func anItemWithoutAKeyAndAMissingChannelAreRefused() {
        let noKey = pack(map([
            "t": .string("setUserMetadata"), "id": .uint(3), "userId": .string("alice"),
            "items": .array([map(["value": .string("v")])]),
        ]))
        #expect(wireError { () throws(WireError) in try ClientFrame.decode(noKey) } != nil)
        let noChannel = pack(map(["t": .string("getChannelMetadata"), "id": .uint(4), "channelType": .uint(1)]))
        #expect(wireError { () throws(WireError) in try ClientFrame.decode(noChannel) }?.requestId == 4)
    }

    @Test func getAnswersAreOkFramesNamedByTheirResult() throws {
        let value = try MessagePackValue.decode(Self.serverFrames[0].encode())
        #expect(value["t"] == .string("ok"))
        #expect(value["result"] == .string("getChannelMetadata"))
        #expect(value["majorRevision"] == .uint(9))
    }
}
