import Foundation
import Testing
import SwitchboardCore
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardWire

/// Metadata over the wire with raw protocol clients: every call, its events, its errors, its rate
/// budget, app isolation, and persistence across a restart.
@Suite(.timeLimit(.minutes(5))) struct StorageTests {
    @Test func channelMetadataCallsAndEventsOverTheWire() async throws {
        let server = try await TestServer.start(limits: .withoutRateLimits)
        let group = try EventLoopGroup(threads: 1)
        let alice = try await RawClient.connect(to: server.url, group: group)
        let bob = try await RawClient.connect(to: server.url, group: group)
        _ = await alice.login("alice")
        _ = await bob.login("bob")
        bob.send(.subscribe(id: 2, channel: "room", features: [.message, .metadata]))
        #expect(await bob.answer(to: 2) == .ok(id: 2))
        #expect(await bob.storageEvents(count: 1).first?.eventType == .snapshot)

        #expect(await alice.storage(3, .setChannel("room", [("topic", "hello"), ("price", "1")])) == .ok(id: 3))
        let read = try #require(await alice.storage(4, .getChannel(channelType: .message, channel: "room"))?.metadata)
        #expect(read.values == ["topic": "hello", "price": "1"])
        #expect(read.items.allSatisfy { $0.authorUserId == "alice" && $0.updateTs > 0 && $0.revision == read.majorRevision })
        let update = try #require(await bob.storageEvents(count: 2).last)
        #expect(update.eventType == .update && update.data == read && update.target == "room" && update.storageType == .channel)

        let stale = MetadataItem(key: "price", value: "2", revision: read.majorRevision + 100)
        let refused = await alice.storage(5, .writeChannel(.update, channelType: .message, channel: "room", data: Metadata(items: [stale]), options: MetadataOptions(), lock: nil))
        #expect(refused?.errorCode == .storageOutdatedRevision)
        let fresh = MetadataItem(key: "price", value: "2", revision: read.majorRevision)
        #expect(await alice.storage(6, .writeChannel(.update, channelType: .message, channel: "room", data: Metadata(items: [fresh]), options: MetadataOptions(), lock: nil)) == .ok(id: 6))
        #expect(await alice.storage(7, .writeChannel(.remove, channelType: .message, channel: "room", data: Metadata(items: [MetadataItem(key: "topic")]), options: MetadataOptions(), lock: nil)) == .ok(id: 7))
        #expect(await bob.storageEvents(count: 4).last?.data.values == ["price": "2"])
        #expect(await alice.storage(8, .setChannel("room", [("a", "1")], lock: "manage"))?.errorCode == .storageInvalidLockName)
        #expect(await alice.storage(9, .writeChannel(.remove, channelType: .message, channel: "room", data: Metadata(), options: MetadataOptions(), lock: nil)) == .ok(id: 9))
        #expect(await bob.storageEvents(count: 5).last?.data == Metadata(majorRevision: 0, items: []))
        #expect(await alice.storage(10, .getChannel(channelType: .message, channel: "room"))?.metadata == Metadata(majorRevision: 0, items: []))
        alice.connection.close()
        bob.connection.close()
        await server.shutdown()
        group.shutdown()
    }

    @Test func userMetadataCallsAndSubscriptionsOverTheWire() async throws {
        let server = try await TestServer.start(limits: .withoutRateLimits)
        let group = try EventLoopGroup(threads: 1)
        let alice = try await RawClient.connect(to: server.url, group: group)
        let bob = try await RawClient.connect(to: server.url, group: group)
        _ = await alice.login("alice")
        _ = await bob.login("bob")
        #expect(await alice.storage(2, .setUser("alice", [("mood", "sunny")])) == .ok(id: 2))
        #expect(await bob.storage(3, .subscribeUser(userId: "alice")) == .ok(id: 3))
        #expect(await bob.storageEvents(count: 1).first?.data.values == ["mood": "sunny"])
        let update = MetadataItem(key: "mood", value: "rain")
        #expect(await alice.storage(4, .writeUser(.update, userId: "alice", data: Metadata(items: [update]), options: MetadataOptions())) == .ok(id: 4))
        let event = try #require(await bob.storageEvents(count: 2).last)
        #expect(event.eventType == .update && event.storageType == .user && event.channelType == .user && event.target == "alice")
        #expect(await bob.storage(5, .getUser(userId: "alice"))?.metadata?.values == ["mood": "rain"])
        #expect(await bob.storage(6, .unsubscribeUser(userId: "alice")) == .ok(id: 6))
        #expect(await bob.storage(7, .unsubscribeUser(userId: "alice"))?.errorCode == .storageNotSubscribe)
        #expect(await alice.storage(8, .writeUser(.remove, userId: "alice", data: Metadata(), options: MetadataOptions())) == .ok(id: 8))
        #expect(await alice.storage(9, .writeUser(.update, userId: "alice", data: Metadata(items: [update]), options: MetadataOptions()))?.errorCode == .storageInvalidMetadataItem)
        // Subscribing again brings a snapshot, after anything the remove would have sent.
        #expect(await bob.storage(10, .subscribeUser(userId: "alice")) == .ok(id: 10))
        #expect(await bob.storageEvents(count: 3).map(\.eventType) == [.snapshot, .update, .snapshot])
        alice.connection.close()
        bob.connection.close()
        await server.shutdown()
        group.shutdown()
    }

    @Test func storageCallsHaveTheirOwnRateBudget() async throws {
        let server = try await TestServer.start()
        let group = try EventLoopGroup(threads: 1)
        let alice = try await RawClient.connect(to: server.url, group: group)
        _ = await alice.login("alice")
        for id in UInt32(2)..<14 { alice.send(.storage(id: id, .getUser(userId: "alice"))) }
        alice.send(.subscribe(id: 14, channel: "room", features: .defaultFeatures))
        var codes: [RtmErrorCode?] = []
        for id in UInt32(2)..<14 { codes.append(await alice.answer(to: id)?.errorCode) }
        #expect(codes.filter { $0 == nil }.count == 10)
        #expect(codes.filter { $0 == .operationRateExceedLimitation }.count == 2)
        #expect(await alice.answer(to: 14) == .ok(id: 14))
        alice.connection.close()
        await server.shutdown()
        group.shutdown()
    }

    @Test func twoAppsWithTheSameNamesNeverSeeEachOthersMetadata() async throws {
        let server = try await TestServer.start(limits: .withoutRateLimits)
        let group = try EventLoopGroup(threads: 1)
        var clients: [String: RawClient] = [:]
        for app in ["app-one", "app-two"] {
            let writer = try await RawClient.connect(to: server.url, group: group)
            let reader = try await RawClient.connect(to: server.url, group: group)
            _ = await writer.login("alice", appId: app)
            _ = await reader.login("bob", appId: app)
            reader.send(.subscribe(id: 2, channel: "room", features: [.metadata]))
            _ = await reader.answer(to: 2)
            _ = await reader.storage(3, .subscribeUser(userId: "alice"))
            _ = await reader.storageEvents(count: 2)
            clients["\(app)/writer"] = writer
            clients["\(app)/reader"] = reader
        }
        for app in ["app-one", "app-two"] {
            let writer = try #require(clients["\(app)/writer"])
            #expect(await writer.storage(10, .setChannel("room", [("from", app)])) == .ok(id: 10))
            #expect(await writer.storage(11, .setUser("alice", [("from", app)])) == .ok(id: 11))
        }
        for app in ["app-one", "app-two"] {
            let reader = try #require(clients["\(app)/reader"])
            // A last write of its own app comes after anything the other app's writes sent it.
            let writer = try #require(clients["\(app)/writer"])
            #expect(await writer.storage(14, .setChannel("room", [("from", app), ("last", "yes")])) == .ok(id: 14))
            let events = await reader.storageEvents(count: 5)
            #expect(events.count == 5 && events.last?.data.values == ["from": app, "last": "yes"], "\(app)")
            #expect(events.dropFirst(2).allSatisfy { $0.data.values["from"] == app }, "\(app)")
            #expect(await reader.storage(12, .getChannel(channelType: .message, channel: "room"))?.metadata?.values == ["from": app, "last": "yes"])
            #expect(await reader.storage(13, .getUser(userId: "alice"))?.metadata?.values == ["from": app])
        }
        for client in clients.values { client.connection.close() }
        await server.shutdown()
        group.shutdown()
    }

    @Test func metadataSurvivesARestartOnTheSameDataDirectory() async throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let persistent: (inout ServerConfiguration) -> Void = {
            $0.metadataStorage = .sqlite
            $0.dataDirectory = directory.path
        }
        let group = try EventLoopGroup(threads: 1)
        let first = try await TestServer.start(configure: persistent)
        let writer = try await RawClient.connect(to: first.url, group: group)
        _ = await writer.login("alice")
        #expect(await writer.storage(2, .setChannel("room", [("kept", "yes")])) == .ok(id: 2))
        writer.connection.close()
        await first.shutdown()

        let second = try await TestServer.start(configure: persistent)
        let reader = try await RawClient.connect(to: second.url, group: group)
        _ = await reader.login("bob")
        #expect(await reader.storage(2, .getChannel(channelType: .message, channel: "room"))?.metadata?.values == ["kept": "yes"])
        reader.connection.close()
        await second.shutdown()
        group.shutdown()
    }

    @Test func aDamagedDatabaseStopsTheServerFromStartingAndNamesTheFile() async throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("metadata.sqlite")
        try Data(repeating: 0x42, count: 4096).write(to: file)
        do {
            _ = try await TestServer.start(configure: {
                $0.metadataStorage = .sqlite
                $0.dataDirectory = directory.path
            })
            Issue.record("the server started on a damaged database")
        } catch {
            #expect("\(error)".contains(file.path), "\(error)")
        }
    }
}
