import Testing
import SwitchboardCore
import SwitchboardStorage
import SwitchboardTestKit

/// What the storage module counts for the server's metrics, and the server's own writes.
extension StorageModuleTests {
    @Test(arguments: [false, true]) func statisticsCountWritesByKindAndRevisionConflicts(suspendingStore: Bool) async throws {
        let (harness, _) = try await world(store: suspendingStore ? SuspendingMetadataStore() : InMemoryMetadataStore())
        #expect(try await harness.bus.request(StorageStatistics()) == StorageCounts())
        _ = try await harness.bus.request(set([("a", "1")], by: alice))
        _ = try await harness.bus.request(set([("b", "2")], by: alice, major: 1))
        _ = try await harness.bus.request(
            SetUserMetadata(caller: bob, userId: "bob", data: Metadata(items: [MetadataItem(key: "k", value: "v")])))
        _ = try await harness.bus.request(
            RemoveUserMetadata(caller: bob, userId: "bob", data: Metadata(items: [MetadataItem(key: "k")])))
        await #expect(throws: RtmError.self) { _ = try await harness.bus.request(set([("c", "3")], by: alice, major: 1)) }
        // Refused before the store is asked: not a write, not a conflict.
        await #expect(throws: RtmError.self) { _ = try await harness.bus.request(set([("", "3")], by: alice)) }

        let counts = try await harness.bus.request(StorageStatistics())
        #expect(counts.writes == [.set: 3, .remove: 1])
        #expect(counts.revisionConflicts == 1)
        #expect(counts.commitLatency.count == 5)
        await harness.stop()
    }

    @Test func theServerWritesChannelMetadataWithoutBeingAMemberAndIsRecordedAsItsAuthor() async throws {
        let (harness, _) = try await world()
        await join(bob, room, on: harness)
        let server = Caller.server(app: "app", userId: "ops")
        _ = try await harness.bus.request(set([("topic", "maintenance")], by: server, options: MetadataOptions(recordUserId: true)))
        let stored = try await harness.bus.request(GetChannelMetadata(caller: server, channelType: .message, channelName: "room"))
        #expect(stored.items.map(\.authorUserId) == ["ops"])
        #expect(harness.outbox.storageEvents(to: bob.session).last?.data.values == ["topic": "maintenance"])
        await harness.stop()
    }
}
