import Foundation
import Synchronization
import Testing
@testable import SwitchboardClient
import SwitchboardCore
import SwitchboardLock
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit

extension EventLog {
    var lockEvents: [RtmLockEvent] {
        all.compactMap { if case .lock(let event) = $0 { event } else { nil } }
    }
}

/// A delegate that records lock events.
final class LockDelegate: RtmClientDelegate, Sendable {
    private let recorded = Mutex<[RtmLockEvent]>([])

    func rtmKit(_ rtmKit: RtmClientKit, didReceiveLockEvent event: RtmLockEvent) {
        recorded.withLock { $0.append(event) }
    }

    var events: [RtmLockEvent] { recorded.withLock { $0 } }

    /// The event types so far, waiting (real time, bounded) until there are `count`.
    func types(count: Int) async -> [RtmLockEventType] {
        _ = await eventually { events.count >= count }
        return events.map(\.eventType)
    }
}

/// The SDK's `RtmLock` against a real server: every call in both forms, lock events through the
/// delegate and the stream, a waiting acquire that returns when the lock is granted, the owner's
/// connection cut with its ttl running out, an owner back in time, and a wait that outlives a
/// lost session.
@Suite(.timeLimit(.minutes(5))) struct RtmLockTests {
    func locked(_ client: RtmClientKit) throws -> RtmLock { try #require(client.getLock()) }

    @Test func everyCallAndEventInBothForms() async throws {
        let store = InMemoryLockStore()
        let server = try await TestServer.start(limits: .withoutRateLimits, modules: { $0.lock = Lock(store: store) })
        let room = ChannelKey(app: "test-app", .message, "room")
        let (alice, _) = try makeClient("alice", server: server)
        let (bob, _) = try makeClient("bob", server: server)
        let (carol, carolLog) = try makeClient("carol", server: server)
        let delegate = LockDelegate()
        carol.addDelegate(delegate)
        for client in [alice, bob, carol] { expectOK(await client.login("")) }
        for client in [alice, bob] { expectOK(await client.subscribe(channelName: "room", option: nil)) }
        let options = RtmSubscribeOptions()
        options.features = [.message, .lock]
        expectOK(await carol.subscribe(channelName: "room", option: options))
        #expect(await delegate.types(count: 1) == [.snapshot])
        let (aliceLock, bobLock) = (try locked(alice), try locked(bob))

        expectOK(await aliceLock.setLock(channelName: "room", channelType: .message, lockName: "L", ttl: 30))
        expectError(.lockAlreadyExist, await aliceLock.setLock(channelName: "room", channelType: .message, lockName: "L"))
        expectError(.invalidParameter, await aliceLock.setLock(channelName: "room", channelType: .message, lockName: "M", ttl: 5))
        expectError(.invalidChannelType, await aliceLock.setLock(channelName: "bob", channelType: .user, lockName: "M"))
        let (first, firstError) = await aliceLock.acquireFencedLock(channelName: "room", channelType: .message, lockName: "L", retry: false)
        #expect(firstError == nil && first?.fencingToken == 1 && first?.lockName == "L" && first?.channelName == "room")
        let (_, refused) = await bobLock.acquireFencedLock(channelName: "room", channelType: .message, lockName: "L", retry: false)
        #expect(refused?.errorCode == .lockAcquireFailed)

        // bob waits; his call returns when alice releases.
        let waiting = Task { await bobLock.acquireFencedLock(channelName: "room", channelType: .message, lockName: "L", retry: true) }
        #expect(await delegate.types(count: 3) == [.snapshot, .lockSet, .lockAcquired])
        // bob is in line on the server, so his client noted the wait before it asked.
        #expect(await eventually { store.lineLength(of: "L", in: room) == 1 })
        let (_, twice) = await bobLock.acquireFencedLock(channelName: "room", channelType: .message, lockName: "L", retry: true)
        #expect(twice?.errorCode == .lockOperationPerforming)
        expectOK(await aliceLock.releaseLock(channelName: "room", channelType: .message, lockName: "L"))
        let (granted, grantError) = await waiting.value
        #expect(grantError == nil && granted?.fencingToken == 2)

        // The completion-block forms.
        let listed = OneShotBox<[RtmLockDetail]>()
        aliceLock.getLocks(channelName: "room", channelType: .message) { response, _ in listed.set(response?.locks ?? []) }
        let details = try #require(await listed.value())
        #expect(details.map(\.lockName) == ["L"] && details.first?.owner == "bob" && details.first?.ttl == 30 && details.first?.fencingToken == 2)
        let revoked = OneShotBox<Bool>()
        aliceLock.revokeLock(channelName: "room", channelType: .message, lockName: "L", userId: "bob") { response, error in
            revoked.set(response != nil && error == nil)
        }
        #expect(await revoked.value() == true)
        let acquired = OneShotBox<UInt64>()
        aliceLock.acquireFencedLock(channelName: "room", channelType: .message, lockName: "L", retry: true) { response, _ in
            acquired.set(response?.fencingToken ?? 0)
        }
        #expect(await acquired.value() == 3)
        let setAnother = OneShotBox<Bool>()
        bobLock.setLock(channelName: "room", channelType: .message, lockName: "M") { response, error in setAnother.set(response != nil && error == nil) }
        #expect(await setAnother.value() == true)

        // A removed lock ends bob's wait with lockNotExist.
        let doomed = Task { await bobLock.acquireFencedLock(channelName: "room", channelType: .message, lockName: "L", retry: true) }
        #expect(await eventually { store.lineLength(of: "L", in: room) == 1 })
        let removed = OneShotBox<Bool>()
        aliceLock.removeLock(channelName: "room", channelType: .message, lockName: "L") { response, error in removed.set(response != nil && error == nil) }
        #expect(await removed.value() == true)
        #expect(await doomed.value.1?.errorCode == .lockNotExist)
        expectError(.lockNotExist, await aliceLock.releaseLock(channelName: "room", channelType: .message, lockName: "L"))

        let expected: [RtmLockEventType] = [
            .snapshot, .lockSet, .lockAcquired, .lockReleased, .lockAcquired, .lockReleased, .lockAcquired, .lockSet, .lockRemoved,
        ]
        #expect(await delegate.types(count: expected.count) == expected)
        let events = delegate.events
        #expect(events.allSatisfy { $0.channelName == "room" && $0.channelType == .message && $0.timestamp > 0 })
        #expect(events[3].lockDetailList.map(\.owner) == ["alice"] && events[4].lockDetailList.map(\.owner) == ["bob"])
        #expect(events[6].lockDetailList.first?.fencingToken == 3)
        #expect(await carolLog.wait { $0.lockEvents.count == expected.count })
        alice.destroy()
        bob.destroy()
        carol.destroy()
        await server.shutdown()
    }

    @Test func codeWrittenAgainstTheReferenceCompilesAndTheTokenIsInGetLocks() async throws {
        let server = try await TestServer.start()
        let (alice, _) = try makeClient("alice", server: server)
        expectOK(await alice.login(""))
        expectOK(await alice.subscribe(channelName: "room", option: nil))
        let lock = try locked(alice)
        expectOK(await lock.setLock(channelName: "room", channelType: .message, lockName: "L", ttl: 10))
        // The reference's shapes: the common response, and an AgoraRtmOperationBlock.
        let (response, error): (RtmCommonResponse?, RtmErrorInfo?) = await lock.acquireLock(
            channelName: "room", channelType: .message, lockName: "L", retry: false)
        #expect(error == nil && response?.channelName == "room")
        expectOK(await lock.releaseLock(channelName: "room", channelType: .message, lockName: "L"))
        let block: RtmOperationBlock = { response, error in #expect(response != nil && error == nil) }
        let answered = OneShotBox<Bool>()
        lock.acquireLock(channelName: "room", channelType: .message, lockName: "L", retry: true) { response, error in
            block(response, error)
            answered.set(response != nil)
        }
        #expect(await answered.value() == true)
        // The fencing token of the acquisition is in getLocks (and acquireFencedLock's answer).
        let (locks, _) = await lock.getLocks(channelName: "room", channelType: .message)
        #expect(locks?.locks.first?.owner == "alice" && locks?.locks.first?.fencingToken == 2)
        alice.destroy()
        await server.shutdown()
    }

    @Test func aLockOutlivesItsChannelsLastMemberAndStillGuardsWrites() async throws {
        // Seed 000: a lock exists from setLock to removeLock; a member who goes gives back what it
        // holds. A write gated by the lock must find it when the channel fills again.
        let server = try await TestServer.start()
        let (alice, _) = try makeClient("alice", server: server)
        expectOK(await alice.login(""))
        expectOK(await alice.subscribe(channelName: "room", option: nil))
        let lock = try locked(alice)
        expectOK(await lock.setLock(channelName: "room", channelType: .message, lockName: "L"))
        expectOK(await lock.acquireLock(channelName: "room", channelType: .message, lockName: "L", retry: false))
        expectOK(await alice.unsubscribe("room"))
        let (bob, bobLog) = try makeClient("bob", server: server)
        expectOK(await bob.login(""))
        let hearLocks = RtmSubscribeOptions()
        hearLocks.features = [.message, .lock]
        expectOK(await bob.subscribe(channelName: "room", option: hearLocks))
        #expect(await bobLog.wait { $0.lockEvents.first?.eventType == .snapshot })
        let snapshot = try #require(bobLog.lockEvents.first)
        #expect(snapshot.lockDetailList.map(\.lockName) == ["L"] && snapshot.lockDetailList.first?.owner == "")
        let bobLock = try locked(bob)
        expectOK(await bobLock.acquireLock(channelName: "room", channelType: .message, lockName: "L", retry: false))
        let data = RtmMetadata()
        data.items = [RtmMetadataItem(key: "score", value: "1")]
        let storage = try #require(bob.getStorage())
        expectOK(await storage.setChannelMetadata(channelName: "room", channelType: .message, data: data, options: nil, lock: "L"))
        expectOK(await bobLock.removeLock(channelName: "room", channelType: .message, lockName: "L"))
        expectError(.storageInvalidLockName, await storage.setChannelMetadata(
            channelName: "room", channelType: .message, data: data, options: nil, lock: "L"))
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func streamChannelMembersWithTheLockFeatureHearLocks() async throws {
        let server = try await TestServer.start(limits: .withoutRateLimits)
        let (alice, _) = try makeClient("alice", server: server)
        let (carol, carolLog) = try makeClient("carol", server: server)
        expectOK(await alice.login(""))
        expectOK(await carol.login(""))
        let hall = try carol.createStreamChannel("hall")
        let option = RtmJoinChannelOption()
        option.features = [.lock]
        expectOK(await hall.join(option))
        #expect(await carolLog.wait { $0.lockEvents.count == 1 })
        let lock = try locked(alice)
        // Lock calls are for members: alice joins the stream channel and subscribes to the message channel.
        expectError(.channelNotJoined, await lock.setLock(channelName: "hall", channelType: .stream, lockName: "L"))
        let aliceHall = try alice.createStreamChannel("hall")
        expectOK(await aliceHall.join(RtmJoinChannelOption()))
        expectError(.channelNotSubscribed, await lock.setLock(channelName: "hall", channelType: .message, lockName: "L"))
        expectOK(await alice.subscribe(channelName: "hall", option: nil))
        expectOK(await lock.setLock(channelName: "hall", channelType: .stream, lockName: "L"))
        // A message channel of the same name is another channel.
        expectOK(await lock.setLock(channelName: "hall", channelType: .message, lockName: "L"))
        // A lock set after both reaches carol: had the message channel's reached her, it would be before it.
        expectOK(await lock.setLock(channelName: "hall", channelType: .stream, lockName: "M"))
        #expect(await carolLog.wait { $0.lockEvents.count == 3 })
        #expect(carolLog.lockEvents.map(\.eventType) == [.snapshot, .lockSet, .lockSet])
        #expect(carolLog.lockEvents.allSatisfy { $0.channelType == .stream && $0.channelName == "hall" })
        #expect(carolLog.lockEvents.last?.lockDetailList.map(\.lockName).contains("M") == true)
        alice.destroy()
        carol.destroy()
        await server.shutdown()
    }

    /// A server on a manual clock with its lock store in reach, alice (whose clock stands still,
    /// so she does not reconnect unless the test moves it) holding lock L with ttl 10 s, and bob
    /// waiting for it.
    struct CutScene {
        let server: SwitchboardServer
        let serverClock = ManualClock()
        let aliceClock = ManualClock()
        let store = InMemoryLockStore()
        let suspended = EventRecorder()
        let alice: RtmClientKit
        let bob: RtmClientKit
        let carolLog: EventLog
        let clients: [RtmClientKit]
        let bobWaits: Task<(RtmAcquireLockResponse?, RtmErrorInfo?), Never>

        init() async throws {
            let (serverClock, store) = (serverClock, store)
            server = try await TestServer.start(clock: serverClock, configure: { $0.loginTimeout = nil }, modules: { $0.lock = Lock(store: store) })
            suspended.record(SessionSuspended.self, on: server.bus)
            (alice, _) = try makeClient("alice", server: server, clock: aliceClock) { $0.heartbeatInterval = 5 }
            let (bob, _) = try makeClient("bob", server: server) { $0.heartbeatInterval = 1800 }
            let (carol, carolLog) = try makeClient("carol", server: server) { $0.heartbeatInterval = 1800 }
            (self.bob, self.carolLog) = (bob, carolLog)
            clients = [alice, bob, carol]
            for client in clients { expectOK(await client.login("")) }
            for client in [alice, bob] { expectOK(await client.subscribe(channelName: "room", option: nil)) }
            let options = RtmSubscribeOptions()
            options.features = [.lock]
            expectOK(await carol.subscribe(channelName: "room", option: options))
            let lock = try #require(alice.getLock())
            expectOK(await lock.setLock(channelName: "room", channelType: .message, lockName: "L", ttl: 10))
            #expect(await lock.acquireFencedLock(channelName: "room", channelType: .message, lockName: "L", retry: false).0?.fencingToken == 1)
            let bobLock = try #require(bob.getLock())
            bobWaits = Task { await bobLock.acquireFencedLock(channelName: "room", channelType: .message, lockName: "L", retry: true) }
            #expect(await carolLog.wait { _ in store.lineLength(of: "L", in: ChannelKey(app: "test-app", .message, "room")) == 1 })
        }

        /// Cuts alice's connection the way a dead network does and lets the server notice
        /// (no heartbeat for 5 + 10 s): the lock's ttl starts.
        func cutAlice() async {
            await alice.loseConnectionSilently()
            serverClock.advance(by: .seconds(16))
            #expect(await suspended.waitFor(SessionSuspended.self).count == 1)
            let room = ChannelKey(app: "test-app", .message, "room")
            #expect(await carolLog.wait { _ in store.deadline(of: "L", in: room) != nil })
        }

        func stop() async {
            for client in clients { client.destroy() }
            await server.shutdown()
        }
    }

    @Test func theOwnersConnectionIsCutAndTheTTLRunsOut() async throws {
        let scene = try await CutScene()
        await scene.cutAlice()
        scene.serverClock.advance(by: .seconds(9))
        try await Task.sleep(for: .milliseconds(100))
        #expect(await scene.bob.getLock()!.getLocks(channelName: "room", channelType: .message).0?.locks.first?.owner == "alice")
        scene.serverClock.advance(by: .seconds(1))
        let (granted, error) = await scene.bobWaits.value
        #expect(error == nil && granted?.fencingToken == 2)
        #expect(await scene.carolLog.wait { $0.lockEvents.count == 5 })
        #expect(scene.carolLog.lockEvents.map(\.eventType) == [.snapshot, .lockSet, .lockAcquired, .lockReleased, .lockAcquired])
        #expect(scene.carolLog.lockEvents[3].lockDetailList.first?.owner == "alice")
        await scene.stop()
    }

    @Test func anOwnerBackInTimeKeepsTheLock() async throws {
        let scene = try await CutScene()
        await scene.cutAlice()
        scene.serverClock.advance(by: .seconds(5))
        // alice's client reconnects and resumes its session within the ttl.
        let aliceLog = EventLog(scene.alice)
        for _ in 0..<50 where await scene.alice.linkState != .connected {
            #expect(await scene.aliceClock.waitForSleepers())
            scene.aliceClock.advance(by: .milliseconds(500))
            try? await Task.sleep(for: .milliseconds(10))
        }
        #expect(await aliceLog.wait { $0.linkStates.last?.currentState == .connected && $0.linkStates.last?.isResumed == true })
        #expect(await scene.carolLog.wait { _ in
            scene.store.deadline(of: "L", in: ChannelKey(app: "test-app", .message, "room")) == nil
        })
        scene.serverClock.advance(by: .seconds(5))
        try await Task.sleep(for: .milliseconds(100))
        let lock = try locked(scene.alice)
        #expect(await lock.getLocks(channelName: "room", channelType: .message).0?.locks.first?.owner == "alice")
        expectOK(await lock.releaseLock(channelName: "room", channelType: .message, lockName: "L"))
        #expect(await scene.bobWaits.value.0?.fencingToken == 2)
        await scene.stop()
    }

    @Test func aWaitOutlivesALostSession() async throws {
        let serverClock = ManualClock()
        let store = InMemoryLockStore()
        let server = try await TestServer.start(
            clock: serverClock, configure: { $0.loginTimeout = nil }, modules: { $0.lock = Lock(store: store) })
        let room = ChannelKey(app: "test-app", .message, "room")
        let recorder = EventRecorder()
        recorder.record(SessionSuspended.self, on: server.bus)
        recorder.record(SessionClosed.self, on: server.bus)
        let bobClock = ManualClock()
        let (alice, _) = try makeClient("alice", server: server) { $0.heartbeatInterval = 1800 }
        let (bob, bobLog) = try makeClient("bob", server: server, clock: bobClock) { $0.presenceTimeout = 5 }
        expectOK(await alice.login(""))
        expectOK(await bob.login(""))
        // bob's subscription goes with his session and comes back before his wait; alice's keeps the lock.
        for client in [alice, bob] { expectOK(await client.subscribe(channelName: "room", option: nil)) }
        let aliceLock = try locked(alice)
        expectOK(await aliceLock.setLock(channelName: "room", channelType: .message, lockName: "L"))
        _ = await aliceLock.acquireFencedLock(channelName: "room", channelType: .message, lockName: "L", retry: false)
        let bobLock = try locked(bob)
        let waiting = Task { await bobLock.acquireFencedLock(channelName: "room", channelType: .message, lockName: "L", retry: true) }
        #expect(await bobLog.wait { _ in store.lineLength(of: "L", in: room) == 1 })
        // The answer (queued) has reached bob's client before his connection is cut.
        for _ in 0..<500 where await !bob.engine.pending.isEmpty { try? await Task.sleep(for: .milliseconds(5)) }

        // bob's connection is lost for longer than his presence timeout: the server ends his
        // session, and with it his place in line.
        await bob.loseConnectionSilently()
        serverClock.advance(by: .seconds(16))  // no heartbeat for 5 + 10 s: suspended
        #expect(await recorder.waitFor(SessionSuspended.self).count == 1)
        serverClock.advance(by: .seconds(5))  // the presence timeout
        #expect(await recorder.waitFor(SessionClosed.self).count == 1)
        #expect(await bobLog.wait { _ in store.lineLength(of: "L", in: room) == 0 }, "his place in line ended with his session")
        // His client comes back as a new session and asks again.
        // Small steps, stopped as soon as the engine is connected: the restore's acquire must be
        // answered before its deadline on bob's clock.
        for _ in 0..<200 where await bob.linkState != .connected {
            #expect(await bobClock.waitForSleepers())
            bobClock.advance(by: .milliseconds(200))
            try? await Task.sleep(for: .milliseconds(10))
        }
        #expect(await bobLog.wait { $0.linkStates.last?.currentState == .connected && $0.linkStates.last?.isResumed == false })
        #expect(await bobLog.wait { _ in store.lineLength(of: "L", in: room) == 1 }, "the SDK asked again")
        expectOK(await aliceLock.releaseLock(channelName: "room", channelType: .message, lockName: "L"))
        let (granted, error) = await waiting.value
        #expect(error == nil && granted?.fencingToken == 2, "\(String(describing: error))")
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func aGrantForAWaitTheClientGaveUpIsGivenBack() {
        let waits = LockWaits()
        var router = PushRouter(dispatcher: EventDispatcher(callbackQueue: nil), sealer: nil, log: nil, lockWaits: waits)
        let lock = LockAddress(.message, "room", "L")
        #expect(router.route(.lock(.granted(lock, fencingToken: 7))) == .lock(.releaseLock(lock)))
        let outcome = Mutex<Result<UInt64, RtmErrorInfo>?>(nil)
        #expect(waits.add(lock) { result in outcome.withLock { $0 = result } })
        #expect(!waits.add(lock) { _ in })
        // The server already had this session in line: the wait goes on, and the grant ends it.
        waits.answered(lock, .failure(RtmErrorInfo(.lockOperationPerforming, operation: "acquireLock", reason: "")))
        #expect(outcome.withLock { $0 } == nil)
        #expect(router.route(.lock(.granted(lock, fencingToken: 8))) == nil)
        #expect(outcome.withLock { (try? $0?.get()) ?? nil } == 8)
    }
}
