import Testing
import SwitchboardCore
import SwitchboardStorage
import SwitchboardStorageContract
import SwitchboardTestKit

/// The storage module on a bus with fakes: requests, events to listeners, locks, leases, limits.
@Suite(.timeLimit(.minutes(2))) struct StorageModuleTests {
    let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
    let bob = Caller(app: "app", userId: "bob", session: SessionID(2))
    let carol = Caller(app: "app", userId: "carol", session: SessionID(3))
    var room: ChannelKey { ChannelKey(app: "app", .message, "room") }

    func world(
        store: any MetadataStore = InMemoryMetadataStore(), limits: Limits = Limits(), extra: [any Module] = []
    ) async throws -> (ModuleHarness, Storage) {
        let storage = Storage(store: store)
        let harness = await ModuleHarness(limits: limits, modules: extra + [storage])
        try await storage.open()
        return (harness, storage)
    }

    func join(_ caller: Caller, _ channel: ChannelKey, _ features: ChannelFeatures = [.metadata], on harness: ModuleHarness) async {
        await harness.bus.publishAndWait(ChannelJoined(caller: caller, channel: channel, features: features))
    }

    func set(_ pairs: [(String, String)], by caller: Caller, major: Int64 = -1, lock: String? = nil, options: MetadataOptions = MetadataOptions())
        -> SetChannelMetadata
    {
        SetChannelMetadata(
            caller: caller, channelType: .message, channelName: "room",
            data: Metadata(majorRevision: major, items: pairs.map { MetadataItem(key: $0.0, value: $0.1) }), options: options,
            lockName: lock)
    }

    @Test(arguments: [false, true]) func membersWithTheMetadataFeatureGetASnapshotThenTheWholeSetAfterEachWrite(suspendingStore: Bool) async throws {
        let (harness, _) = try await world(store: suspendingStore ? SuspendingMetadataStore() : InMemoryMetadataStore())
        await join(bob, room, on: harness)
        await join(carol, room, [.message, .presence], on: harness)
        let empty = harness.outbox.storageEvents(to: bob.session)
        #expect(empty.map(\.eventType) == [.snapshot])
        #expect(empty.first?.data == Metadata(majorRevision: 0, items: []))

        _ = try await harness.bus.request(set([("a", "1")], by: alice))
        _ = try await harness.bus.request(set([("b", "2")], by: alice, options: MetadataOptions(recordTs: true, recordUserId: true)))
        let events = harness.outbox.storageEvents(to: bob.session)
        #expect(events.map(\.eventType) == [.snapshot, .update, .update])
        let last = try #require(events.last)
        #expect(last.data.values == ["a": "1", "b": "2"])
        #expect(last.storageType == .channel && last.channelType == .message && last.target == "room")
        #expect(last.data.items[1].authorUserId == "alice" && last.data.items[1].updateTs == harness.clock.wallMilliseconds)
        #expect(last.data.items[0].authorUserId == "" && last.data.items[0].updateTs == 0)
        #expect(harness.outbox.storageEvents(to: carol.session).isEmpty)

        // A late joiner gets the set as it is; a leaver hears nothing more.
        await join(carol, room, on: harness)
        #expect(harness.outbox.storageEvents(to: carol.session).map(\.data) == [last.data])
        await harness.bus.publishAndWait(ChannelLeft(caller: bob, channel: room, reason: .left))
        _ = try await harness.bus.request(
            RemoveChannelMetadata(caller: alice, channelType: .message, channelName: "room", data: Metadata(majorRevision: last.data.majorRevision)))
        #expect(harness.outbox.storageEvents(to: bob.session).count == 3)
        let removal = try #require(harness.outbox.storageEvents(to: carol.session).last)
        #expect(removal.eventType == .update && removal.data == Metadata(majorRevision: 0, items: []))
        let read = try await harness.bus.request(GetChannelMetadata(caller: bob, channelType: .message, channelName: "room"))
        #expect(read == Metadata(majorRevision: 0, items: []))
    }

    @Test func aMemberThatStopsHearingMetadataHearsNoMoreAndGetsTheSetWhenItAsksAgain() async throws {
        let (harness, _) = try await world()
        await join(bob, room, on: harness)
        _ = try await harness.bus.request(set([("a", "1")], by: alice))
        #expect(harness.outbox.storageEvents(to: bob.session).map(\.eventType) == [.snapshot, .update])
        // Subscribed again without metadata: still a member, no longer a listener.
        await join(bob, room, [.message], on: harness)
        _ = try await harness.bus.request(set([("b", "2")], by: alice))
        #expect(harness.outbox.storageEvents(to: bob.session).count == 2)
        // With metadata again: the set as it is now, then the writes after it.
        await join(bob, room, [.message, .metadata], on: harness)
        _ = try await harness.bus.request(set([("c", "3")], by: alice))
        let events = harness.outbox.storageEvents(to: bob.session)
        #expect(events.map(\.eventType) == [.snapshot, .update, .snapshot, .update])
        #expect(events[2].data.values == ["a": "1", "b": "2"])
        #expect(events[3].data.values == ["a": "1", "b": "2", "c": "3"])
    }

    @Test func userMetadataSubscribersGetASnapshotAndUpdatesUntilTheyUnsubscribe() async throws {
        var limits = Limits()
        limits.storage.userSubscriptionsPerClient = 2
        let (harness, _) = try await world(limits: limits)
        _ = try await harness.bus.request(
            SetUserMetadata(caller: alice, userId: "alice", data: Metadata(items: [MetadataItem(key: "mood", value: "sunny")])))
        _ = try await harness.bus.request(SubscribeUserMetadata(caller: bob, userId: "alice"))
        _ = try await harness.bus.request(SubscribeUserMetadata(caller: bob, userId: "alice"))
        _ = try await harness.bus.request(
            UpdateUserMetadata(caller: carol, userId: "alice", data: Metadata(items: [MetadataItem(key: "mood", value: "rain")])))
        var events = harness.outbox.storageEvents(to: bob.session)
        #expect(events.map(\.eventType) == [.snapshot, .update])
        #expect(events.map { $0.data.values["mood"] } == ["sunny", "rain"])
        #expect(events.allSatisfy { $0.storageType == .user && $0.channelType == .user && $0.target == "alice" })

        _ = try await harness.bus.request(SubscribeUserMetadata(caller: bob, userId: "dave"))
        #expect(await errorCode { _ = try await harness.bus.request(SubscribeUserMetadata(caller: bob, userId: "erin")) } == .storageSubscribeUserExceedLimitation)
        _ = try await harness.bus.request(UnsubscribeUserMetadata(caller: bob, userId: "alice"))
        #expect(await errorCode { _ = try await harness.bus.request(UnsubscribeUserMetadata(caller: bob, userId: "alice")) } == .storageNotSubscribe)
        _ = try await harness.bus.request(
            RemoveUserMetadata(caller: alice, userId: "alice", data: Metadata(items: [MetadataItem(key: "mood")])))
        events = harness.outbox.storageEvents(to: bob.session)
        #expect(events.count == 3)  // the two above and dave's empty snapshot
        #expect(try await harness.bus.request(GetUserMetadata(caller: bob, userId: "alice")).items.isEmpty)
    }

    @Test(arguments: [false, true]) func badRequestsAreRefusedWithTheReferenceCodes(suspendingStore: Bool) async throws {
        let (harness, _) = try await world(store: suspendingStore ? SuspendingMetadataStore() : InMemoryMetadataStore())
        let bus = harness.bus
        func code(_ items: [MetadataItem], major: Int64 = -1, type: RtmChannelType = .message, name: String = "room") async -> RtmErrorCode? {
            await errorCode {
                _ = try await bus.request(
                    SetChannelMetadata(caller: alice, channelType: type, channelName: name, data: Metadata(majorRevision: major, items: items)))
            }
        }
        #expect(await code([MetadataItem(key: "k")], type: .user) == .invalidChannelType)
        #expect(await code([MetadataItem(key: "k")], name: String(repeating: "n", count: 65)) == .invalidChannelName)
        #expect(await code([]) == .storageInvalidArgument)
        #expect(await code([MetadataItem(key: "")]) == .storageInvalidKey)
        #expect(await code([MetadataItem(key: "a\u{1}")]) == .storageInvalidKey)
        #expect(await code([MetadataItem(key: String(repeating: "k", count: 33))]) == .storageKeyLengthOverflow)
        #expect(await code([MetadataItem(key: String(repeating: "k", count: 32))]) == nil)
        #expect(await code([MetadataItem(key: "v", value: String(repeating: "v", count: 16 * 1024 + 1))]) == .storageValueLengthOverflow)
        #expect(await code([MetadataItem(key: "d"), MetadataItem(key: "d")]) == .storageDuplicateKey)
        #expect(await code([MetadataItem(key: "r", revision: 0)]) == .storageInvalidRevision)
        #expect(await code([MetadataItem(key: "r")], major: -5) == .storageInvalidRevision)
        #expect(await code((0...256).map { MetadataItem(key: "k\($0)") }) == .storageMetadataItemExceedLimitation)
        #expect(await code([MetadataItem(key: "t", lease: .timeToLive(milliseconds: 0))]) == .storageInvalidArgument)
        #expect(await code([MetadataItem(key: "big1", value: String(repeating: "v", count: 9000)), MetadataItem(key: "big2", value: String(repeating: "v", count: 9000))]) == .storageMetadataLengthOverflow)
        #expect(await errorCode { _ = try await bus.request(GetUserMetadata(caller: alice, userId: "")) } == .invalidUserId)
        #expect(try await bus.request(GetChannelMetadata(caller: alice, channelType: .message, channelName: "room")).values == [String(repeating: "k", count: 32): ""])
    }

    @Test func aWriteThatNamesALockNeedsTheCallerToHoldIt() async throws {
        let locks = FakeLocks()
        let (harness, _) = try await world(extra: [locks])
        locks.hold("manage", in: room, by: alice.session)
        _ = try await harness.bus.request(set([("a", "1")], by: alice, lock: "manage"))
        #expect(await errorCode { _ = try await harness.bus.request(set([("a", "2")], by: bob, lock: "manage")) } == .storageLockNotAcquired)
        #expect(await errorCode { _ = try await harness.bus.request(set([("a", "2")], by: alice, lock: "other")) } == .storageInvalidLockName)
        _ = try await harness.bus.request(set([("a", "3")], by: bob, lock: ""))
        #expect(try await harness.bus.request(GetChannelMetadata(caller: bob, channelType: .message, channelName: "room")).values == ["a": "3"])
    }

    @Test func aStaleOwnersWriteThatWaitedWhileTheNextOwnerWroteIsRefused() async throws {
        let store = GatedStore()
        let locks = FakeLocks()
        let (harness, _) = try await world(store: store, extra: [locks])
        locks.hold("manage", in: room, by: alice.session, token: 5)
        store.holdNextWrite()
        // Alice's write passes the lock check with token 5, then waits for the store.
        let stale = Task { await errorCode { _ = try await harness.bus.request(set([("a", "alice")], by: alice, lock: "manage")) } }
        #expect(await store.waitUntilHeld())
        // Meanwhile her lock is revoked and Bob acquires it (token 6), writes, and his write commits.
        locks.hold("manage", in: room, by: bob.session, token: 6)
        _ = try await harness.bus.request(set([("a", "bob")], by: bob, lock: "manage"))
        store.release()
        #expect(await stale.value == .storageLockNotAcquired)
        #expect(try await harness.bus.request(GetChannelMetadata(caller: bob, channelType: .message, channelName: "room")).values == ["a": "bob"])
    }

    @Test(arguments: [false, true]) func withNoLockModuleALockedWriteIsRefused(suspendingStore: Bool) async throws {
        let (harness, _) = try await world(store: suspendingStore ? SuspendingMetadataStore() : InMemoryMetadataStore())
        #expect(await errorCode { _ = try await harness.bus.request(set([("a", "1")], by: alice, lock: "manage")) } == .storageInvalidLockName)
    }

    @Test func twentyWritersWithOneRevisionHaveExactlyOneWinner() async throws {
        let (harness, _) = try await world(store: SQLiteMetadataStore(directory: TemporaryDirectory.make()))
        let bus = harness.bus
        _ = try await bus.request(set([("bid", "0")], by: alice))
        for round in 1...3 {
            let current = try await bus.request(GetChannelMetadata(caller: alice, channelType: .message, channelName: "room"))
            let revision = current.items[0].revision
            let wins = await withTaskGroup(of: Bool.self) { group in
                for writer in 0..<20 {
                    group.addTask {
                        let caller = Caller(app: "app", userId: "w\(writer)", session: SessionID(UInt64(100 + writer)))
                        let item = MetadataItem(key: "bid", value: "\(round)/\(writer)", revision: revision)
                        return (try? await bus.request(
                            UpdateChannelMetadata(caller: caller, channelType: .message, channelName: "room", data: Metadata(items: [item])))) != nil
                    }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1, "round \(round)")
        }
    }

    @Test(arguments: [false, true]) func timeToLiveItemsGoWhenTheirTimeRunsOutWithAnEvent(suspendingStore: Bool) async throws {
        let (harness, _) = try await world(store: suspendingStore ? SuspendingMetadataStore() : InMemoryMetadataStore())
        await join(bob, room, on: harness)
        _ = try await harness.bus.request(
            SetChannelMetadata(
                caller: alice, channelType: .message, channelName: "room",
                data: Metadata(items: [MetadataItem(key: "offer", value: "5", lease: .timeToLive(milliseconds: 2_500)), MetadataItem(key: "name", value: "x")])))
        let written = try await harness.bus.request(GetChannelMetadata(caller: bob, channelType: .message, channelName: "room"))
        #expect(written.items[0].expiresAt == harness.clock.wallMilliseconds + 2_500)
        #expect(await harness.clock.waitForSleepers())
        harness.clock.advance(by: .seconds(2))
        #expect(await harness.clock.waitForSleepers())
        #expect(harness.outbox.storageEvents(to: bob.session).count == 2)
        harness.clock.advance(by: .seconds(1))
        #expect(await eventually { harness.outbox.storageEvents(to: bob.session).count == 3 })
        #expect(harness.outbox.storageEvents(to: bob.session).last?.data.values == ["name": "x"])
    }

    @Test(arguments: [false, true]) func sessionBoundItemsGoWhenTheSessionEnds(suspendingStore: Bool) async throws {
        let (harness, _) = try await world(store: suspendingStore ? SuspendingMetadataStore() : InMemoryMetadataStore())
        _ = try await harness.bus.request(SubscribeUserMetadata(caller: bob, userId: "alice"))
        _ = try await harness.bus.request(
            SetUserMetadata(
                caller: alice, userId: "alice",
                data: Metadata(items: [MetadataItem(key: "seat", value: "3", lease: .session), MetadataItem(key: "bio", value: "hi")])))
        let read = try await harness.bus.request(GetUserMetadata(caller: bob, userId: "alice"))
        #expect(read.items.map(\.sessionBound) == [true, false])
        await harness.bus.publishAndWait(SessionClosed(caller: alice, reason: .logout))
        #expect(try await harness.bus.request(GetUserMetadata(caller: bob, userId: "alice")).values == ["bio": "hi"])
        #expect(harness.outbox.storageEvents(to: bob.session).last?.data.values == ["bio": "hi"])
        // A write binding an item to a session that has ended leaves nothing.
        #expect(await errorCode {
            _ = try await harness.bus.request(
                SetUserMetadata(caller: alice, userId: "alice", data: Metadata(items: [MetadataItem(key: "late", value: "1", lease: .session)])))
        } == .notLogin)
        #expect(try await harness.bus.request(GetUserMetadata(caller: bob, userId: "alice")).values == ["bio": "hi"])
    }

    @Test(arguments: [false, true]) func appsNeverSeeEachOthersMetadata(suspendingStore: Bool) async throws {
        let (harness, _) = try await world(store: suspendingStore ? SuspendingMetadataStore() : InMemoryMetadataStore())
        let other = Caller(app: "other", userId: "bob", session: SessionID(9))
        await join(other, ChannelKey(app: "other", .message, "room"), on: harness)
        _ = try await harness.bus.request(SubscribeUserMetadata(caller: other, userId: "alice"))
        _ = try await harness.bus.request(set([("a", "1")], by: alice))
        _ = try await harness.bus.request(SetUserMetadata(caller: alice, userId: "alice", data: Metadata(items: [MetadataItem(key: "k", value: "v")])))
        #expect(harness.outbox.storageEvents(to: other.session).allSatisfy { $0.eventType == .snapshot && $0.data.items.isEmpty })
        #expect(try await harness.bus.request(GetChannelMetadata(caller: other, channelType: .message, channelName: "room")).items.isEmpty)
        #expect(try await harness.bus.request(GetUserMetadata(caller: other, userId: "alice")).items.isEmpty)
    }

    @Test func valuesAreSealedBeforeTheyReachTheStore() async throws {
        let store = InMemoryMetadataStore()
        let (harness, _) = try await world(store: store, extra: [FakeAtRest(key: 0x5A)])
        _ = try await harness.bus.request(set([("secret", "plain text")], by: alice))
        let stored = try #require(try await store.read(.channel(room)))
        #expect(stored.items[0].value != Array("plain text".utf8))
        #expect(stored.items[0].size == 10)
        #expect(try await harness.bus.request(GetChannelMetadata(caller: alice, channelType: .message, channelName: "room")).values == ["secret": "plain text"])
        await harness.stop()

        // The same store with another key, or with none, does not open.
        for extra in [[FakeAtRest(key: 0x33)], []] as [[any Module]] {
            let storage = Storage(store: store)
            let again = await ModuleHarness(modules: extra + [storage])
            await #expect(throws: StorageStartupError.self) { try await storage.open() }
            await again.stop()
        }
        let storage = Storage(store: store)
        let again = await ModuleHarness(modules: [FakeAtRest(key: 0x5A), storage])
        try await storage.open()
        #expect(try await again.bus.request(GetChannelMetadata(caller: alice, channelType: .message, channelName: "room")).values == ["secret": "plain text"])
        await again.stop()
    }

    @Test func aStoreWithPlainValuesIsNotOpenedWithAKey() async throws {
        let store = InMemoryMetadataStore()
        let (harness, _) = try await world(store: store)
        _ = try await harness.bus.request(set([("a", "1")], by: alice))
        await harness.stop()
        let storage = Storage(store: store)
        let again = await ModuleHarness(modules: [FakeAtRest(key: 1), storage])
        do {
            try await storage.open()
            Issue.record("opened")
        } catch {
            #expect("\(error)".contains("not sealed"))
        }
        await again.stop()
    }

    @Test func requestsBeforeOpenAreRefused() async throws {
        let storage = Storage()
        let harness = await ModuleHarness(modules: [storage])
        #expect(await errorCode { _ = try await harness.bus.request(GetUserMetadata(caller: alice, userId: "alice")) } == .storageNotAvailable)
        await harness.stop()
    }
}

@Suite(.timeLimit(.minutes(2))) struct StorageStoreSeamTests {
    @Test func theModuleReachesMetadataOnlyThroughItsStore() async throws {
        let store = SuspendingMetadataStore()
        let storage = Storage(store: store)
        let harness = await ModuleHarness(modules: [storage])
        try await storage.open()
        let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
        await harness.bus.publishAndWait(ChannelJoined(caller: alice, channel: alice.channel(.message, "room"), features: [.metadata]))
        _ = try await harness.bus.request(
            SetChannelMetadata(
                caller: alice, channelType: .message, channelName: "room",
                data: Metadata(majorRevision: -1, items: [MetadataItem(key: "a", value: "1")]), options: MetadataOptions(), lockName: nil))
        let read = try await harness.bus.request(GetChannelMetadata(caller: alice, channelType: .message, channelName: "room"))
        #expect(read.values == ["a": "1"])
        #expect(harness.outbox.storageEvents(to: alice.session).map(\.eventType) == [.snapshot, .update])
        #expect(store.calls.recorded == ["open", "sealingMarker", "read", "write", "read"])
        await harness.stop()
    }
}
