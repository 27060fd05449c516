import Foundation
import Synchronization
import Testing
@testable import SwitchboardClient
import SwitchboardCore
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit

/// The SDK's `RtmStorage` against a real server: every call in both forms, storage events through
/// the stream and the delegate, encryption, leases.
@Suite(.timeLimit(.minutes(5))) struct StorageTests {
    func metadata(_ pairs: [(String, String)], major: Int64 = -1, revisions: [String: Int64] = [:]) -> RtmMetadata {
        let data = RtmMetadata()
        data.majorRevision = major
        data.items = pairs.map { RtmMetadataItem(key: $0.0, value: $0.1, revision: revisions[$0.0] ?? -1) }
        return data
    }

    func values(_ data: RtmMetadata?) -> [String: String] {
        Dictionary(uniqueKeysWithValues: (data?.items ?? []).map { ($0.key, $0.value) })
    }

    @Test func channelMetadataCallsAndEvents() async throws {
        let server = try await TestServer.start(limits: .withoutRateLimits)
        let (alice, _) = try makeClient("alice", server: server)
        let (bob, bobLog) = try makeClient("bob", server: server)
        expectOK(await alice.login(""))
        expectOK(await bob.login(""))
        let options = RtmSubscribeOptions()
        options.features = [.message, .metadata]
        expectOK(await bob.subscribe(channelName: "room", option: options))
        #expect(await bobLog.wait { $0.storageEvents.count == 1 })
        #expect(bobLog.storageEvents.first?.eventType == .snapshot)

        let storage = try #require(alice.getStorage())
        let record = RtmMetadataOptions(recordTs: true, recordUserId: true)
        expectOK(await storage.setChannelMetadata(
            channelName: "room", channelType: .message, data: metadata([("topic", "hello"), ("price", "1")]), options: record, lock: nil))
        #expect(await bobLog.wait { $0.storageEvents.count == 2 })
        let update = try #require(bobLog.storageEvents.last)
        #expect(update.eventType == .update && update.storageType == .channel && update.channelType == .message && update.target == "room")
        #expect(values(update.data) == ["topic": "hello", "price": "1"])
        #expect(update.data.items?.allSatisfy { $0.authorUserId == "alice" && $0.updateTs > 0 } == true)

        let (read, readError) = await storage.getChannelMetadata(channelName: "room", channelType: .message)
        #expect(readError == nil)
        let data = try #require(read?.data)
        #expect(values(data) == ["topic": "hello", "price": "1"] && data.majorRevision == update.data.majorRevision)
        let revision = try #require(data.items?.first { $0.key == "price" }?.revision)
        expectError(.storageOutdatedRevision, await storage.updateChannelMetadata(
            channelName: "room", channelType: .message, data: metadata([("price", "2")], revisions: ["price": revision + 7]),
            options: nil, lock: nil))
        expectOK(await storage.updateChannelMetadata(
            channelName: "room", channelType: .message, data: metadata([("price", "2")], revisions: ["price": revision]),
            options: nil, lock: nil))
        expectError(.storageInvalidLockName, await storage.setChannelMetadata(
            channelName: "room", channelType: .message, data: metadata([("x", "1")]), options: nil, lock: "manage"))

        // The completion-block forms.
        let removed = OneShotBox<Bool>()
        storage.removeChannelMetadata(channelName: "room", channelType: .message, data: metadata([("topic", "")]), options: nil, lock: nil) { response, error in
            removed.set(response != nil && error == nil)
        }
        #expect(await removed.value() == true)
        let got = OneShotBox<[String: String]>()
        storage.getChannelMetadata(channelName: "room", channelType: .message) { response, _ in got.set(values(response?.data)) }
        #expect(await got.value() == ["price": "2"])

        expectOK(await storage.removeChannelMetadata(channelName: "room", channelType: .message, data: RtmMetadata(), options: nil, lock: nil))
        #expect(await bobLog.wait { $0.storageEvents.last?.data.items?.isEmpty == true && $0.storageEvents.count == 5 })
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func userMetadataCallsSubscriptionsAndTheDelegate() async throws {
        let server = try await TestServer.start(limits: .withoutRateLimits)
        let (alice, _) = try makeClient("alice", server: server)
        let delegate = StorageDelegate()
        let (bob, _) = try makeClient("bob", server: server)
        bob.addDelegate(delegate)
        expectOK(await alice.login(""))
        expectOK(await bob.login(""))
        let aliceStorage = try #require(alice.getStorage())
        let bobStorage = try #require(bob.getStorage())
        expectOK(await aliceStorage.setUserMetadata(userId: "alice", data: metadata([("mood", "sunny")]), options: nil))
        expectOK(await bobStorage.subscribeUserMetadata(userId: "alice"))
        #expect(await delegate.wait { $0.count == 1 })
        expectOK(await aliceStorage.updateUserMetadata(userId: "alice", data: metadata([("mood", "rain")]), options: nil))
        #expect(await delegate.wait { $0.count == 2 })
        let events = delegate.events
        #expect(events.map(\.eventType) == [.snapshot, .update])
        #expect(events.map { values($0.data)["mood"] } == ["sunny", "rain"])
        #expect(events.allSatisfy { $0.storageType == .user && $0.channelType == .user && $0.target == "alice" })
        #expect(values(await bobStorage.getUserMetadata(userId: "alice").0?.data) == ["mood": "rain"])
        expectOK(await bobStorage.unsubscribeUserMetadata(userId: "alice"))
        expectError(.storageNotSubscribe, await bobStorage.unsubscribeUserMetadata(userId: "alice"))
        expectOK(await aliceStorage.removeUserMetadata(userId: "alice", data: RtmMetadata(), options: nil))
        expectError(.storageInvalidMetadataItem, await aliceStorage.updateUserMetadata(userId: "alice", data: metadata([("mood", "x")]), options: nil))
        // Subscribing again brings a snapshot, after anything the remove would have sent.
        expectOK(await bobStorage.subscribeUserMetadata(userId: "alice"))
        #expect(await delegate.wait { $0.count == 3 })
        #expect(delegate.events.map(\.eventType) == [.snapshot, .update, .snapshot])
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func encryptedValuesAreSealedOnTheServerAndOpenForTheReader() async throws {
        let server = try await TestServer.start(limits: .withoutRateLimits)
        let (alice, _) = try makeClient("alice", server: server, configure: encrypted(.AES256GCM))
        let (bob, bobLog) = try makeClient("bob", server: server, configure: encrypted(.AES256GCM))
        expectOK(await alice.login(""))
        expectOK(await bob.login(""))
        expectOK(await bob.getStorage()!.subscribeUserMetadata(userId: "alice"))
        expectOK(await alice.getStorage()!.setUserMetadata(userId: "alice", data: metadata([("secret", "plain words")]), options: nil))
        #expect(await bobLog.wait { $0.storageEvents.count == 2 })
        #expect(values(bobLog.storageEvents.last?.data) == ["secret": "plain words"])
        #expect(values(await bob.getStorage()!.getUserMetadata(userId: "alice").0?.data) == ["secret": "plain words"])
        // What the server holds is sealed.
        let caller = Caller(app: "test-app", userId: "carol", session: SessionID(999_999))
        let stored = try await server.bus.request(GetUserMetadata(caller: caller, userId: "alice"))
        #expect(stored.items.count == 1 && stored.items[0].key == "secret" && !stored.items[0].value.contains("plain"))
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func aValueThatDoesNotOpenIsReportedAndTheRestOfTheSetDelivered() async throws {
        // One item of the set written under another key: the read and the storage events still
        // deliver the set, that item marked sealed and left as stored, the others opened.
        let server = try await TestServer.start(limits: .withoutRateLimits)
        let (alice, _) = try makeClient("alice", server: server, configure: encrypted(.AES256GCM))
        let (mallory, _) = try makeClient("mallory", server: server, configure: encrypted(.AES256GCM, key: "another key"))
        let (bob, bobLog) = try makeClient("bob", server: server, configure: encrypted(.AES256GCM))
        for client in [alice, mallory, bob] { expectOK(await client.login("")) }
        for client in [alice, mallory] { expectOK(await client.subscribe(channelName: "room", option: nil)) }
        let withMetadata = RtmSubscribeOptions()
        withMetadata.features = [.message, .metadata]
        expectOK(await bob.subscribe(channelName: "room", option: withMetadata))
        expectOK(await bob.getStorage()!.subscribeUserMetadata(userId: "alice"))
        expectOK(await alice.getStorage()!.setChannelMetadata(
            channelName: "room", channelType: .message, data: metadata([("topic", "hello"), ("price", "1")]), options: nil, lock: nil))
        expectOK(await mallory.getStorage()!.updateChannelMetadata(
            channelName: "room", channelType: .message, data: metadata([("price", "2")]), options: nil, lock: nil))
        let (read, readError) = await bob.getStorage()!.getChannelMetadata(channelName: "room", channelType: .message)
        #expect(readError == nil)
        let data = try #require(read?.data)
        #expect(data.sealedKeys == ["price"])
        let items = Dictionary(uniqueKeysWithValues: (data.items ?? []).map { ($0.key, $0) })
        #expect(items["topic"]?.value == "hello" && items["topic"]?.isSealed == false)
        #expect(items["price"]?.isSealed == true && items["price"]?.value != "2" && items["price"]?.revision ?? 0 > 0)
        // The storage event of the change reaches bob too, the same way.
        #expect(await bobLog.wait { log in log.storageEvents.contains { $0.target == "room" && $0.data.sealedKeys == ["price"] } })
        let event = try #require(bobLog.storageEvents.last { $0.target == "room" })
        #expect(values(event.data)["topic"] == "hello")
        // Alice's own user metadata, all of it opening, is untouched by the rest.
        expectOK(await alice.getStorage()!.setUserMetadata(userId: "alice", data: metadata([("mood", "fine")]), options: nil))
        #expect(await bobLog.wait { log in log.storageEvents.contains { $0.target == "alice" && self.values($0.data) == ["mood": "fine"] } })
        #expect(bobLog.storageEvents.filter { $0.target == "alice" }.allSatisfy { $0.data.sealedKeys.isEmpty })
        #expect(await bob.undecryptableMessages == 0, "no message was dropped")
        for client in [alice, mallory, bob] { client.destroy() }
        await server.shutdown()
    }

    @Test func aSessionBoundItemGoesWhenItsWriterLogsOut() async throws {
        let server = try await TestServer.start(limits: .withoutRateLimits)
        let (alice, _) = try makeClient("alice", server: server)
        let (bob, bobLog) = try makeClient("bob", server: server)
        expectOK(await alice.login(""))
        expectOK(await bob.login(""))
        expectOK(await bob.getStorage()!.subscribeUserMetadata(userId: "alice"))
        let data = metadata([("seat", "3"), ("bio", "hi")])
        data.items?[0].boundToSession = true
        data.items?[1].timeToLive = 60_000
        expectOK(await alice.getStorage()!.setUserMetadata(userId: "alice", data: data, options: nil))
        #expect(await bobLog.wait { $0.storageEvents.count == 2 })
        let written = try #require(bobLog.storageEvents.last?.data.items)
        #expect(written[0].boundToSession && written[1].expiresAt > 0 && !written[1].boundToSession)
        expectOK(await alice.logout())
        #expect(await bobLog.wait { $0.storageEvents.count == 3 })
        #expect(values(bobLog.storageEvents.last?.data) == ["bio": "hi"])
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }
}

extension EventLog {
    var storageEvents: [RtmStorageEvent] {
        all.compactMap { if case .storage(let event) = $0 { event } else { nil } }
    }
}

/// A delegate that records storage events.
final class StorageDelegate: RtmClientDelegate, Sendable {
    private let recorded = Mutex<[RtmStorageEvent]>([])

    func rtmKit(_ rtmKit: RtmClientKit, didReceiveStorageEvent event: RtmStorageEvent) {
        recorded.withLock { $0.append(event) }
    }

    var events: [RtmStorageEvent] { recorded.withLock { $0 } }

    func wait(until condition: ([RtmStorageEvent]) -> Bool) async -> Bool {
        await eventually { condition(events) }
    }
}

/// A value set once from a completion block, awaited by the test.
final class OneShotBox<Value: Sendable>: Sendable {
    private let stored = Mutex<Value??>(nil)

    func set(_ value: Value) { stored.withLock { $0 = .some(value) } }

    func value() async -> Value? {
        let deadline = ContinuousClock.now + Patience.standard
        while ContinuousClock.now < deadline {
            if let value = stored.withLock({ $0 }) { return value }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }
}
