import Testing
import SwitchboardCore
import SwitchboardWire
@testable import SwitchboardBench

@Suite(.timeLimit(.minutes(2))) struct FrameScanTests {
    private func users(in bytes: [UInt8]) -> (scan: PresenceScan?, seen: [(PresenceScan.Place, String, Int, String?)]) {
        var seen: [(PresenceScan.Place, String, Int, String?)] = []
        let scan = PresenceScan.scan(bytes) { place, entry in
            seen.append((
                place, String(decoding: entry.userId, as: UTF8.self), entry.stateCount,
                entry.firstValue.map { String(decoding: $0, as: UTF8.self) }
            ))
        }
        return (scan, seen)
    }

    @Test func presenceSnapshotListsItsUsersAndOccupancy() {
        let event = PresenceDelivery(
            type: .snapshot, channelType: .message, channelName: "room", publisher: "u2-t",
            snapshot: [UserState(userId: "u1-t", states: ["s": "v1"]), UserState(userId: "u2-t")], more: true,
            totalOccupancy: 700, timestamp: 1)
        let (scan, seen) = users(in: Wire.encodePush(.presence(event)))
        #expect(scan == PresenceScan(eventType: 1, totalOccupancy: 700, more: true))
        #expect(seen.map(\.0) == [.snapshot, .snapshot, .publisher])
        #expect(seen.map(\.1) == ["u1-t", "u2-t", "u2-t"])
        #expect(seen[0].2 == 1 && seen[0].3 == "v1")
        #expect(seen[1].2 == 0 && seen[1].3 == nil)
    }

    @Test func presenceIntervalListsEveryKindOfChange() {
        let info = PresenceIntervalInfo(
            joinUserList: (0..<300).map { "u\($0)-t" }, leaveUserList: ["u900-t"], timeoutUserList: ["u901-t"],
            userStateList: [UserState(userId: "u5-t", states: ["s": "v5"])], totalOccupancy: 10_000)
        let event = PresenceDelivery(
            type: .interval, channelType: .message, channelName: "room", publisher: "", interval: info, timestamp: 1)
        let (scan, seen) = users(in: Wire.encodePush(.presence(event)))
        #expect(scan == PresenceScan(eventType: 2, totalOccupancy: 10_000, more: false))
        #expect(seen.filter { $0.0 == .joined }.map(\.1) == (0..<300).map { "u\($0)-t" })
        #expect(seen.filter { $0.0 == .left }.map(\.1) == ["u900-t"])
        #expect(seen.filter { $0.0 == .timedOut }.map(\.1) == ["u901-t"])
        #expect(seen.filter { $0.0 == .stateChanged }.map(\.3) == ["v5"])
        #expect(!seen.contains { $0.0 == .publisher })
    }

    @Test func presenceJoinNamesItsPublisher() {
        let event = PresenceDelivery(
            type: .remoteJoinChannel, channelType: .message, channelName: "room", publisher: "u42-t", firstOrLast: true,
            timestamp: 1)
        let (scan, seen) = users(in: Wire.encodePush(.presence(event)))
        #expect(scan?.eventType == 3)
        #expect(seen.map(\.0) == [.publisher])
        #expect(seen.map(\.1) == ["u42-t"])
    }

    @Test func presenceScanRefusesOtherFrames() {
        let message = Push.message(
            MessageDelivery(channelType: .message, channelName: "room", payload: .string("x"), publisher: "a", customType: "", timestamp: 1))
        #expect(PresenceScan.scan(Wire.encodePush(message)) { _, _ in } == nil)
        #expect(PresenceScan.scan(ServerFrame.ok(id: 3).encode()) { _, _ in } == nil)
        #expect(PresenceScan.scan([0x81, 0xa1]) { _, _ in } == nil)
    }

    @Test func whoNowPageListsUsersAndNextPage() {
        let page = WhoNowPage(
            totalOccupancy: 2, users: [UserState(userId: "u7-t", states: ["s": "v7"]), UserState(userId: "u8-t")],
            nextPage: "abc")
        let bytes = ServerFrame.answer(id: 0x8000_0002, .presence(.whoNow(page))).encode()
        var ids: [String] = []
        let scan = WhoNowScan.scan(bytes) { ids.append(String(decoding: $0.userId, as: UTF8.self)) }
        #expect(scan == WhoNowScan(id: 0x8000_0002, totalOccupancy: 2, users: 2, nextPage: "abc"))
        #expect(ids == ["u7-t", "u8-t"])
        #expect(WhoNowScan.scan(ServerFrame.ok(id: 3).encode()) { _ in } == nil)
    }

    @Test func metadataScanReadsPushesAndAnswers() {
        let value = ValueStamp.make(sequence: 41, timestamp: 123_456_789, size: 64)
        let data = Metadata(majorRevision: 12, items: [MetadataItem(key: "k", value: value, revision: 12)])
        let push = Push.storage(
            StorageEvent(channelType: .message, storageType: .channel, eventType: .update, target: "room", data: data, timestamp: 1))
        #expect(
            MetadataScan.scan(Wire.encodePush(push))
                == MetadataScan(id: nil, eventType: 3, majorRevision: 12, itemCount: 1, sequence: 41, timestamp: 123_456_789))
        let answer = ServerFrame.answer(id: 9, .storage(.channelMetadata(data))).encode()
        #expect(
            MetadataScan.scan(answer)
                == MetadataScan(id: 9, eventType: nil, majorRevision: 12, itemCount: 1, sequence: 41, timestamp: 123_456_789))
        let empty = ServerFrame.answer(id: 10, .storage(.channelMetadata(Metadata(majorRevision: 0)))).encode()
        #expect(MetadataScan.scan(empty) == MetadataScan(id: 10, majorRevision: 0, itemCount: 0))
        #expect(MetadataScan.scan(ServerFrame.ok(id: 3).encode()) == nil)
    }

    @Test func valueStampRoundTrips() {
        let value = ValueStamp.make(sequence: 7, timestamp: 1_000_000_007, size: 100)
        #expect(value.utf8.count == 100)
        #expect(ValueStamp.read(value)! == (7, 1_000_000_007))
        #expect(ValueStamp.read(ValueStamp.make(sequence: 0, timestamp: 5, size: 0))! == (0, 5))
        #expect(ValueStamp.read("hello") == nil)
        #expect(ValueStamp.read("12") == nil)
        #expect(ValueStamp.read("1:") == nil)
    }

    @Test func userBitmapCountsEachUserOnce() {
        var bitmap = UserBitmap(capacity: 130)
        let inserted = [0, 129, 129, 5_000, -1].map { bitmap.insert($0) }
        #expect(inserted == [true, true, false, true, false])
        #expect(bitmap.count == 3)
        #expect(bitmap.contains(129) && bitmap.contains(5_000) && !bitmap.contains(64) && !bitmap.contains(90_000))
        var other = UserBitmap(capacity: 0)
        other.insert(64)
        other.insert(129)
        other.insert(70_000)
        bitmap.formUnion(other)
        #expect(bitmap.count == 5)
        #expect(bitmap.contains(70_000) && bitmap.contains(64))
        #expect(UserBitmap.number(of: "u9876-k3x9") == 9876)
        #expect(UserBitmap.number(of: "c12") == 12)
        #expect(UserBitmap.number(of: "u-x") == nil)
        #expect(UserBitmap.number(of: "ux1-t") == nil)
    }

    @Test func cursorReadsSignedIntegers() {
        for value: Int64 in [0, 1, 127, 128, 70_000, -1, -32, -33, -200, -40_000, -3_000_000_000, .min, .max] {
            var writer = MessagePackWriter()
            writer.writeInt(value)
            let bytes = writer.bytes
            let read = bytes.withUnsafeBytes { raw -> Int64? in
                var cursor = MessagePackCursor(bytes: raw)
                return cursor.integer()
            }
            #expect(read == value, "\(value)")
        }
    }
}

@Suite(.timeLimit(.minutes(2))) struct LockScanTests {
    private let lock = LockAddress(ChannelAddress(.message, "room"), "bench")

    @Test func acquireAnswersSayWhetherTheLockIsTheCallers() {
        let acquired = ServerFrame.answer(id: 0x8000_0003, .lock(.acquire(.acquired(fencingToken: 41)))).encode()
        #expect(LockScan.scan(acquired) == .acquireAnswer(id: 0x8000_0003, acquired: true, fencingToken: 41))
        let queued = ServerFrame.answer(id: 9, .lock(.acquire(.queued))).encode()
        #expect(LockScan.scan(queued) == .acquireAnswer(id: 9, acquired: false, fencingToken: nil))
    }

    @Test func grantsAndFailedWaitsArePushes() {
        let granted = Wire.encodePush(.lock(.granted(lock, fencingToken: 42)))
        #expect(LockScan.scan(granted) == .granted(fencingToken: 42))
        let failed = Wire.encodePush(.lock(.waitFailed(lock, code: .lockNotExist, reason: "removed")))
        #expect(LockScan.scan(failed) == .waitFailed)
    }

    @Test func otherFramesAreNotLockFrames() {
        #expect(LockScan.scan(ServerFrame.ok(id: 5).encode()) == nil)
        #expect(LockScan.scan(ServerFrame.answer(id: 6, .lock(.locks([]))).encode()) == nil)
        #expect(LockScan.scan([0x91, 0x01]) == nil)
    }
}
