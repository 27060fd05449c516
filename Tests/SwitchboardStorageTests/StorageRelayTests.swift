import Synchronization
import Testing
import SwitchboardCore
import SwitchboardStorage
import SwitchboardStorageContract
import SwitchboardTestKit

/// The storage module with a relay to other nodes on its bus (faked): it asks for a set's changes
/// before a new listener's snapshot, announces user-metadata subscriptions, and hands the other
/// nodes' changes to its listeners, never an older set after a newer one.
extension StorageModuleTests {
    @Test func aNewListenersSetIsRelayedBeforeItsSnapshotAndSubscriptionsAreAnnounced() async throws {
        let relay = FakeRelay()
        let (harness, _) = try await world(extra: [relay])
        harness.recorder.record(UserMetadataSubscriptionChanged.self, on: harness.bus)
        await join(bob, room, on: harness)
        #expect(relay.openedMetadata == [.channel(room)])
        #expect(harness.outbox.storageEvents(to: bob.session).map(\.eventType) == [.snapshot])
        _ = try await harness.bus.request(SubscribeUserMetadata(caller: bob, userId: "alice"))
        #expect(relay.openedMetadata == [.channel(room), .user(UserKey("app", "alice"))])
        _ = try await harness.bus.request(UnsubscribeUserMetadata(caller: bob, userId: "alice"))
        _ = try await harness.bus.request(SubscribeUserMetadata(caller: carol, userId: "alice"))
        await harness.bus.publishAndWait(SessionClosed(caller: carol, reason: .logout))
        let alice = UserKey("app", "alice")
        #expect(await eventually { harness.recorder.events(of: UserMetadataSubscriptionChanged.self).count == 4 })
        #expect(
            harness.recorder.events(of: UserMetadataSubscriptionChanged.self) == [
                UserMetadataSubscriptionChanged(session: bob.session, user: alice, subscribed: true),
                UserMetadataSubscriptionChanged(session: bob.session, user: alice, subscribed: false),
                UserMetadataSubscriptionChanged(session: carol.session, user: alice, subscribed: true),
                UserMetadataSubscriptionChanged(session: carol.session, user: alice, subscribed: false),
            ])
    }

    @Test func aSubscribeTheRelayCannotServeFailsAndIsUndone() async throws {
        let relay = FakeRelay(openFailure: RtmError(.storageOperationTimeout, operation: OpenMetadataRelay.operation, reason: "no Redis"))
        let (harness, _) = try await world(extra: [relay])
        #expect(await errorCode { _ = try await harness.bus.request(SubscribeUserMetadata(caller: bob, userId: "alice")) } == .storageOperationTimeout)
        _ = try await harness.bus.request(
            SetUserMetadata(caller: alice, userId: "alice", data: Metadata(items: [MetadataItem(key: "mood", value: "sunny")])))
        #expect(await errorCode { _ = try await harness.bus.request(UnsubscribeUserMetadata(caller: bob, userId: "alice")) } == .storageNotSubscribe)
        // A channel member's join was answered already: it gets its snapshot, and this node's changes.
        await join(carol, room, on: harness)
        _ = try await harness.bus.request(set([("a", "1")], by: alice))
        #expect(harness.outbox.storageEvents(to: carol.session).map(\.eventType) == [.snapshot, .update])
        #expect(harness.outbox.storageEvents(to: bob.session).isEmpty)
    }

    @Test func otherNodesChangesReachListenersNeverOlderAfterNewer() async throws {
        let store = PublishingStore()
        let (harness, _) = try await world(store: store, extra: [FakeRelay()])
        harness.recorder.record(MetadataChanged.self, on: harness.bus)
        await join(bob, room, on: harness)
        let target = MetadataTarget.channel(room)
        /// Another node writes `value`; returns what its store published.
        func otherNode(writes value: String) async throws -> [UInt8] {
            store.published(try await store.base.write(.set([("x", value)]), to: target, limits: Limits()))
        }
        func deliver(_ news: RelayedMetadata) async throws {
            _ = try await harness.bus.request(DeliverRelayedMetadata(target: target, news: news))
        }
        try await deliver(.change(try await otherNode(writes: "1")))
        let missed = try await otherNode(writes: "2")
        try await deliver(.change(try await otherNode(writes: "3")))
        try await deliver(.change(missed))
        _ = try await otherNode(writes: "4")
        try await deliver(.mayHaveMissedChanges)
        _ = try await otherNode(writes: "5")
        try await deliver(.change(Array("unreadable".utf8)))
        let events = harness.outbox.storageEvents(to: bob.session)
        #expect(events.map(\.eventType) == [.snapshot, .update, .update, .update, .update])
        #expect(events.map { $0.data.values["x"] } == [nil, "1", "3", "4", "5"])
        #expect(events.map(\.data.majorRevision) == [0, 1, 3, 4, 5])
        // The other node announced its changes on its own bus.
        #expect(harness.recorder.events(of: MetadataChanged.self).isEmpty)
    }

    /// A change committed here while another node's earlier one is still on its way is not told
    /// ahead of it: the relay brings both, in revision order, and each listener hears each once.
    @Test func aChangeCommittedHereWaitsForTheOtherNodesEarlierOne() async throws {
        let store = PublishingStore()
        let (harness, _) = try await world(store: store, extra: [FakeRelay()])
        await join(bob, room, on: harness)
        let target = MetadataTarget.channel(room)
        func deliver(_ payload: [UInt8]) async throws {
            _ = try await harness.bus.request(DeliverRelayedMetadata(target: target, news: .change(payload)))
        }
        // Revision 1, here: bob has revision 0, so he hears it at once.
        _ = try await harness.bus.request(set([("x", "here-1")], by: alice))
        #expect(harness.outbox.storageEvents(to: bob.session).map { $0.data.values["x"] } == [nil, "here-1"])
        try await deliver(store.publishedHere[0])
        // Revision 2, on another node, not relayed yet; revision 3, here.
        let theirs = store.published(try await store.base.write(.set([("x", "there-2")]), to: target, limits: Limits()))
        _ = try await harness.bus.request(set([("x", "here-3")], by: alice))
        #expect(harness.outbox.storageEvents(to: bob.session).count == 2, "revision 3 waits for revision 2")
        try await deliver(theirs)
        try await deliver(store.publishedHere[1])
        let events = harness.outbox.storageEvents(to: bob.session)
        #expect(events.map { $0.data.values["x"] } == [nil, "here-1", "there-2", "here-3"])
        #expect(events.map(\.data.majorRevision) == [0, 1, 2, 3])
    }
}

/// An in-memory store that, like a store shared by nodes, reads back the changes it published
/// (each set's revisions follow one another while the tests write one set).
final class PublishingStore: ForwardingStore {
    let base = InMemoryMetadataStore()
    private let changes = Mutex<[[UInt8]: MetadataCommit]>([:])
    private let ownChanges = Mutex<[[UInt8]]>([])

    var publishesChanges: Bool { true }

    /// What the store published for the writes made through it (this node's), in order.
    var publishedHere: [[UInt8]] { ownChanges.withLock { $0 } }

    func write(_ write: MetadataWrite, to target: MetadataTarget, limits: Limits) async throws(RtmError) -> MetadataCommit {
        let commit = try await base.write(write, to: target, limits: limits)
        let payload = published(commit)
        ownChanges.withLock { $0.append(payload) }
        return commit
    }

    /// What the store publishes for `commit`.
    func published(_ commit: MetadataCommit) -> [UInt8] {
        let payload = Array("change \(commit.revision)".utf8)
        changes.withLock { $0[payload] = commit }
        return payload
    }

    func change(publishedAs payload: [UInt8], of target: MetadataTarget) -> MetadataCommit? {
        changes.withLock { $0[payload] }.flatMap { $0.target == target ? $0 : nil }
    }
}
