import Foundation
import Testing
import SwitchboardCore
import SwitchboardLock
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardWire

extension RawClient {
    /// Sends a lock request and waits for its answer.
    func lock(_ operation: LockOperation, id: UInt32) async -> ServerFrame? {
        send(.lock(id: id, operation))
        return await answer(to: id)
    }

    /// The lock pushes received so far, in order.
    var lockPushes: [LockPush] { received.compactMap(\.lockPush) }

    /// The lock events received so far, in order.
    var lockEvents: [LockEventDelivery] {
        lockPushes.compactMap { if case .event(let event) = $0 { event } else { nil } }
    }

    /// The lock event types received so far, in order.
    var lockEventTypes: [RtmLockEventType] { lockEvents.map(\.eventType) }

    /// Waits (bounded, real time) until a lock push matches.
    func waitForLockPush(_ matches: @escaping (LockPush) -> Bool) async -> LockPush? {
        await waitFor { $0.lockPushes.first(where: matches) }
    }
}

/// Locks over the wire with raw protocol clients: every request, answer and push, waits that do
/// not hold up a connection, the owner's connection cut with its ttl on a manual clock, rate
/// limits, and two apps that never meet.
@Suite(.timeLimit(.minutes(5))) struct LockTests {
    let lockL = LockAddress(.message, "room", "L")

    /// A server whose lock module keeps its locks in `store`.
    func start(clock: any SwitchboardClock = SystemClock(), store: InMemoryLockStore = InMemoryLockStore()) async throws
        -> (SwitchboardServer, EventLoopGroup)
    {
        let server = try await TestServer.start(clock: clock, modules: { $0.lock = Lock(store: store) })
        return (server, try EventLoopGroup(threads: 1))
    }

    /// A client of `app` logged in as `userId` and subscribed to room with `features` (request 2),
    /// or not subscribed at all (`nil`).
    func client(_ userId: String, _ server: SwitchboardServer, _ group: EventLoopGroup, app: String = "test-app",
                features: RtmSubscribeChannelFeature? = [.message]) async throws -> RawClient {
        let client = try await RawClient.connect(to: server.url, group: group)
        #expect(await client.login(userId, appId: app)?.loginAccepted != nil)
        if let features { await subscribe(client, features: features) }
        return client
    }

    func subscribe(_ client: RawClient, features: RtmSubscribeChannelFeature = [.message]) async {
        client.send(.subscribe(id: 2, channel: "room", features: features))
        #expect(await client.answer(to: 2) == .ok(id: 2))
        if features.contains(.lock) {
            #expect(await client.waitFor { $0.lockEventTypes.first } == .snapshot)
        }
    }

    @Test func everyLockCallAndEventWorksOverTheWire() async throws {
        let (server, group) = try await start()
        let alice = try await client("alice", server, group)
        let bob = try await client("bob", server, group)
        let watcher = try await client("watcher", server, group, features: [.lock])
        #expect(await alice.lock(.setLock(lockL, ttl: 20), id: 10) == .ok(id: 10))
        #expect(await alice.lock(.setLock(LockAddress(.message, "room", "M"), ttl: nil), id: 11) == .ok(id: 11))
        #expect(await alice.lock(.setLock(lockL, ttl: 20), id: 12)?.errorCode == .lockAlreadyExist)
        #expect(await alice.lock(.setLock(LockAddress(.message, "room", "N"), ttl: 5), id: 13)?.errorCode == .invalidParameter)
        #expect(await alice.lock(.acquireLock(lockL, retry: false), id: 14) == .answer(id: 14, .lock(.acquire(.acquired(fencingToken: 1)))))
        #expect(await bob.lock(.acquireLock(lockL, retry: false), id: 15)?.errorCode == .lockAcquireFailed)
        #expect(await bob.lock(.acquireLock(lockL, retry: true), id: 16) == .answer(id: 16, .lock(.acquire(.queued))))
        #expect(await bob.lock(.acquireLock(lockL, retry: true), id: 17)?.errorCode == .lockOperationPerforming)
        #expect(await bob.lock(.releaseLock(LockAddress(.message, "room", "M")), id: 18)?.errorCode == .lockNotAcquired)
        #expect(await bob.lock(.getLocks(ChannelAddress(.message, "room")), id: 19) == .answer(id: 19, .lock(.locks([
            LockDetail(lockName: "L", owner: "alice", ttl: 20, fencingToken: 1),
            LockDetail(lockName: "M", owner: "", ttl: 10, fencingToken: 0),
        ]))))
        #expect(await alice.lock(.releaseLock(lockL), id: 20) == .ok(id: 20))
        #expect(await bob.waitForLockPush { $0 == .granted(lockL, fencingToken: 2) } != nil)
        #expect(await alice.lock(.revokeLock(lockL, userId: "bob"), id: 21) == .ok(id: 21))
        #expect(await alice.lock(.acquireLock(lockL, retry: true), id: 22) == .answer(id: 22, .lock(.acquire(.acquired(fencingToken: 3)))))
        #expect(await bob.lock(.acquireLock(lockL, retry: true), id: 23) == .answer(id: 23, .lock(.acquire(.queued))))
        #expect(await alice.lock(.removeLock(lockL), id: 24) == .ok(id: 24))
        let failed = await bob.waitForLockPush { if case .waitFailed = $0 { true } else { false } }
        #expect(failed == .waitFailed(lockL, code: .lockNotExist, reason: "L was removed while waiting for it"))
        #expect(await alice.lock(.removeLock(lockL), id: 25)?.errorCode == .lockNotExist)
        #expect(await alice.lock(.getLocks(ChannelAddress(.user, "bob")), id: 26)?.errorCode == .invalidChannelType)
        #expect(await alice.lock(.setLock(LockAddress(.stream, "room", ""), ttl: nil), id: 27)?.errorCode == .lockInvalidName)

        let expected: [RtmLockEventType] = [
            .snapshot, .lockSet, .lockSet, .lockAcquired, .lockReleased, .lockAcquired, .lockReleased, .lockAcquired, .lockRemoved,
        ]
        _ = await watcher.waitFor { $0.lockEventTypes.count >= expected.count ? true : nil }
        #expect(watcher.lockEventTypes == expected)
        // Only the watcher asked for lock events; the others only got what was theirs.
        #expect(alice.lockPushes.isEmpty)
        #expect(bob.lockPushes.count == 2)
        for client in [alice, bob, watcher] { client.connection.close() }
        await server.shutdown()
        group.shutdown()
    }

    @Test func lockCallsNeedTheChannelSubscribedOrJoined() async throws {
        let (server, group) = try await start()
        let alice = try await client("alice", server, group, features: nil)
        let stream = LockAddress(.stream, "room", "L")
        #expect(await alice.lock(.setLock(lockL, ttl: nil), id: 10)?.errorCode == .channelNotSubscribed)
        #expect(await alice.lock(.getLocks(lockL.channel), id: 11)?.errorCode == .channelNotSubscribed)
        #expect(await alice.lock(.setLock(stream, ttl: nil), id: 12)?.errorCode == .channelNotJoined)
        // Pipelined right behind the subscribe and the join: their answers came first, so these pass.
        alice.send(.subscribe(id: 13, channel: "room", features: [.message]))
        alice.send(.lock(id: 14, .setLock(lockL, ttl: nil)))
        alice.send(.stream(id: 15, .join(channel: "room", token: "", features: [])))
        alice.send(.lock(id: 16, .setLock(stream, ttl: nil)))
        #expect(await alice.answer(to: 14) == .ok(id: 14))
        #expect(await alice.answer(to: 16) == .ok(id: 16))
        #expect(await alice.lock(.getLocks(stream.channel), id: 17)?.lockAnswer == .locks([
            LockDetail(lockName: "L", owner: "", ttl: 10, fencingToken: 0)
        ]))
        // Unsubscribed, alice is a stranger to the message channel again; still joined to the stream one.
        alice.send(.unsubscribe(id: 18, channel: "room"))
        #expect(await alice.answer(to: 18) == .ok(id: 18))
        #expect(await alice.lock(.acquireLock(lockL, retry: false), id: 19)?.errorCode == .channelNotSubscribed)
        #expect(await alice.lock(.acquireLock(stream, retry: false), id: 20)?.lockAnswer == .acquire(.acquired(fencingToken: 1)))
        alice.connection.close()
        await server.shutdown()
        group.shutdown()
    }

    @Test func aChannelsLocksOutliveItsLastMember() async throws {
        let (server, group) = try await start()
        let alice = try await client("alice", server, group)
        let bob = try await client("bob", server, group)
        #expect(await alice.lock(.setLock(lockL, ttl: nil), id: 10) == .ok(id: 10))
        #expect(await alice.lock(.acquireLock(lockL, retry: false), id: 11)?.lockAnswer == .acquire(.acquired(fencingToken: 1)))
        // bob leaves; alice is still there and keeps the channel's lock.
        bob.send(.unsubscribe(id: 12, channel: "room"))
        #expect(await bob.answer(to: 12) == .ok(id: 12))
        #expect(await alice.lock(.getLocks(lockL.channel), id: 13)?.lockAnswer == .locks([
            LockDetail(lockName: "L", owner: "alice", ttl: 10, fencingToken: 1)
        ]))
        // alice, the last member, unsubscribes: she gives the lock back, and it stays (a lock
        // lives until removeLock); subscribed again she finds it, free.
        alice.send(.unsubscribe(id: 14, channel: "room"))
        #expect(await alice.answer(to: 14) == .ok(id: 14))
        await subscribe(alice, features: [.message, .lock])
        func names(_ answer: LockAnswer?) -> [String]? {
            if case .locks(let locks)? = answer { locks.map(\.lockName) } else { nil }
        }
        #expect(alice.lockEvents.map(\.eventType) == [.snapshot] && alice.lockEvents.first?.locks.map(\.owner) == [""])
        #expect(names(await alice.lock(.getLocks(lockL.channel), id: 15)?.lockAnswer) == ["L"])
        // alice acquires it again and logs out, the channel's last member: it stays, released.
        #expect(await alice.lock(.acquireLock(lockL, retry: false), id: 16)?.lockAnswer == .acquire(.acquired(fencingToken: 2)))
        alice.send(.logout(id: 17))
        _ = await alice.answer(to: 17)
        let carol = try await client("carol", server, group, features: [.message, .lock])
        #expect(carol.lockEvents.map(\.eventType) == [.snapshot] && carol.lockEvents.first?.locks.map(\.owner) == [""])
        #expect(names(await carol.lock(.getLocks(lockL.channel), id: 18)?.lockAnswer) == ["L"])
        for client in [alice, bob, carol] { client.connection.close() }
        await server.shutdown()
        group.shutdown()
    }

    @Test func aWaitingAcquireDoesNotHoldUpTheConnection() async throws {
        let (server, group) = try await start()
        let alice = try await client("alice", server, group)
        let bob = try await client("bob", server, group)
        _ = await alice.lock(.setLock(lockL, ttl: nil), id: 10)
        _ = await alice.lock(.acquireLock(lockL, retry: false), id: 11)
        // Pipelined behind the waiting acquire: answered at once, in order.
        bob.send(.lock(id: 20, .acquireLock(lockL, retry: true)))
        bob.send(.heartbeat(id: 21))
        bob.send(.publish(id: 22, channelType: .message, channel: "room", message: .string("still here"), customType: ""))
        #expect(await bob.answer(to: 22) == .ok(id: 22))
        #expect(bob.received.compactMap(\.requestId) == [1, 2, 20, 21, 22])
        #expect(bob.lockPushes.isEmpty)
        _ = await alice.lock(.releaseLock(lockL), id: 12)
        #expect(await bob.waitForLockPush { _ in true } == .granted(lockL, fencingToken: 2))
        alice.connection.close()
        bob.connection.close()
        await server.shutdown()
        group.shutdown()
    }

    @Test func anOwnerWhoseConnectionIsCutKeepsTheLockForItsTTLThenTheWaiterGetsIt() async throws {
        let clock = ManualClock()
        let store = InMemoryLockStore()
        let (server, group) = try await start(clock: clock, store: store)
        let alice = try await client("alice", server, group)
        let bob = try await client("bob", server, group)
        let watcher = try await client("watcher", server, group, features: [.lock, .message])
        _ = await alice.lock(.setLock(lockL, ttl: 10), id: 10)
        _ = await alice.lock(.acquireLock(lockL, retry: false), id: 11)
        _ = await bob.lock(.acquireLock(lockL, retry: true), id: 12)
        alice.connection.close()
        let room = ChannelKey(app: "test-app", lockL.channel)
        #expect(await watcher.waitFor { _ in store.deadline(of: "L", in: room) } == clock.wallNow + .seconds(10))
        await advance(clock, by: .seconds(9))
        #expect(await watcher.lock(.getLocks(lockL.channel), id: 20)?.lockAnswer == .locks([
            LockDetail(lockName: "L", owner: "alice", ttl: 10, fencingToken: 1)
        ]))
        #expect(bob.lockPushes.isEmpty)
        await advance(clock, by: .seconds(1))
        #expect(await bob.waitForLockPush { _ in true } == .granted(lockL, fencingToken: 2))
        _ = await watcher.waitFor { $0.lockEventTypes.count >= 5 ? true : nil }
        #expect(watcher.lockEventTypes == [.snapshot, .lockSet, .lockAcquired, .lockReleased, .lockAcquired])
        bob.connection.close()
        watcher.connection.close()
        await server.shutdown()
        group.shutdown()
    }

    @Test func anOwnerWhoResumesInTimeKeepsTheLock() async throws {
        let clock = ManualClock()
        let store = InMemoryLockStore()
        let (server, group) = try await start(clock: clock, store: store)
        let alice = try await RawClient.connect(to: server.url, group: group)
        guard let grant = await alice.login("alice")?.loginAccepted else {
            Issue.record("alice logs in")
            return
        }
        await subscribe(alice)
        let bob = try await client("bob", server, group)
        _ = await alice.lock(.setLock(lockL, ttl: 10), id: 10)
        _ = await alice.lock(.acquireLock(lockL, retry: false), id: 11)
        _ = await bob.lock(.acquireLock(lockL, retry: true), id: 12)
        alice.connection.close()
        let room = ChannelKey(app: "test-app", lockL.channel)
        _ = await bob.waitFor { _ in store.deadline(of: "L", in: room) }
        await advance(clock, by: .seconds(8))
        let back = try await RawClient.connect(to: server.url, group: group)
        back.send(.login(id: 1, Login(
            appId: "test-app", userId: "alice", token: "", heartbeatInterval: 5, presenceTimeout: 30,
            resume: grant.ticket)))
        #expect(await back.answer(to: 1)?.loginAccepted?.resumed == true)
        _ = await bob.waitFor { _ in store.deadline(of: "L", in: room) == nil ? true : nil }
        await advance(clock, by: .seconds(5))
        #expect(await back.lock(.releaseLock(lockL), id: 20) == .ok(id: 20))
        #expect(await bob.waitForLockPush { _ in true } == .granted(lockL, fencingToken: 2))
        back.connection.close()
        bob.connection.close()
        await server.shutdown()
        group.shutdown()
    }

    @Test func loggingOutOrUnsubscribingReleasesAtOnce() async throws {
        let (server, group) = try await start()
        let alice = try await client("alice", server, group)
        let bob = try await client("bob", server, group)
        let carol = try await client("carol", server, group)
        let lockM = LockAddress(.message, "room", "M")
        _ = await alice.lock(.setLock(lockL, ttl: nil), id: 10)
        _ = await alice.lock(.setLock(lockM, ttl: nil), id: 11)
        _ = await alice.lock(.acquireLock(lockL, retry: false), id: 12)
        _ = await bob.lock(.acquireLock(lockM, retry: false), id: 13)
        _ = await carol.lock(.acquireLock(lockL, retry: true), id: 14)
        _ = await carol.lock(.acquireLock(lockM, retry: true), id: 15)
        bob.send(.unsubscribe(id: 20, channel: "room"))
        #expect(await carol.waitForLockPush { $0 == .granted(lockM, fencingToken: 3) } != nil)
        alice.send(.logout(id: 21))
        #expect(await carol.waitForLockPush { $0 == .granted(lockL, fencingToken: 4) } != nil)
        bob.connection.close()
        carol.connection.close()
        await server.shutdown()
        group.shutdown()
    }

    @Test func lockAcquiresHaveTheirOwnRateLimit() async throws {
        // On a clock that stands still, every call falls in the same second.
        let (server, group) = try await start(clock: ManualClock())
        let alice = try await client("alice", server, group)
        _ = await alice.lock(.setLock(lockL, ttl: nil), id: 10)
        for id in UInt32(20)..<31 { alice.send(.lock(id: id, .acquireLock(lockL, retry: false))) }
        _ = await alice.answer(to: 30)
        let answers = (UInt32(20)..<31).compactMap { id in alice.received.first { $0.requestId == id } }
        #expect(answers.prefix(10).allSatisfy { $0 == .answer(id: $0.requestId!, .lock(.acquire(.acquired(fencingToken: 1)))) })
        #expect(answers.last?.errorCode == .operationRateExceedLimitation)
        // Acquires count against the 20 other calls as well: subscribe, setLock and 10 acquires leave 8.
        for id in UInt32(40)..<48 { #expect(await alice.lock(.getLocks(lockL.channel), id: id)?.lockAnswer != nil) }
        #expect(await alice.lock(.getLocks(lockL.channel), id: 48)?.errorCode == .operationRateExceedLimitation)
        alice.connection.close()
        await server.shutdown()
        group.shutdown()
    }

    @Test func twoAppsWithTheSameNamesNeverSeeEachOthersLocks() async throws {
        let (server, group) = try await start()
        let one = try await client("alice", server, group, app: "one", features: [.lock])
        let two = try await client("alice", server, group, app: "two", features: [.lock])
        let bobOne = try await client("bob", server, group, app: "one")
        let bobTwo = try await client("bob", server, group, app: "two")
        #expect(await one.lock(.setLock(lockL, ttl: 30), id: 10) == .ok(id: 10))
        #expect(await two.lock(.acquireLock(lockL, retry: true), id: 11)?.errorCode == .lockNotExist)
        #expect(await two.lock(.setLock(lockL, ttl: 60), id: 12) == .ok(id: 12))
        #expect(await one.lock(.acquireLock(lockL, retry: false), id: 13)?.lockAnswer == .acquire(.acquired(fencingToken: 1)))
        #expect(await bobTwo.lock(.acquireLock(lockL, retry: false), id: 14)?.lockAnswer == .acquire(.acquired(fencingToken: 2)))
        #expect(await bobOne.lock(.revokeLock(lockL, userId: "bob"), id: 15)?.errorCode == .lockNotAcquired)
        #expect(await bobTwo.lock(.revokeLock(lockL, userId: "alice"), id: 16)?.errorCode == .lockNotAcquired)
        #expect(await bobOne.lock(.getLocks(lockL.channel), id: 17)?.lockAnswer == .locks([
            LockDetail(lockName: "L", owner: "alice", ttl: 30, fencingToken: 1)
        ]))
        #expect(await bobTwo.lock(.getLocks(lockL.channel), id: 18)?.lockAnswer == .locks([
            LockDetail(lockName: "L", owner: "bob", ttl: 60, fencingToken: 2)
        ]))
        _ = await one.waitFor { $0.lockEventTypes.count >= 3 ? true : nil }
        _ = await two.waitFor { $0.lockEventTypes.count >= 3 ? true : nil }
        let seenByOne = one.lockEvents
        let seenByTwo = two.lockEvents
        #expect(seenByOne.map(\.eventType) == [.snapshot, .lockSet, .lockAcquired])
        #expect(seenByTwo.map(\.eventType) == [.snapshot, .lockSet, .lockAcquired])
        #expect(seenByOne.flatMap(\.locks).allSatisfy { $0.ttl == 30 && $0.owner != "bob" })
        #expect(seenByTwo.flatMap(\.locks).allSatisfy { $0.ttl == 60 && $0.owner != "alice" })
        for client in [one, two, bobOne, bobTwo] { client.connection.close() }
        await server.shutdown()
        group.shutdown()
    }

    @Test func aMetadataWriteUnderALockIsRefusedWithAStaleFencingToken() async throws {
        let (server, group) = try await start()
        let alice = try await client("alice", server, group)
        let bob = try await client("bob", server, group)
        func write(_ client: RawClient, lock: String, token: UInt64?, id: UInt32) async -> ServerFrame? {
            client.send(.storage(id: id, .writeChannel(
                .set, channelType: .message, channel: "room", data: Metadata(items: [MetadataItem(key: "k", value: "v\(id)")]),
                options: MetadataOptions(fencingToken: token), lock: lock)))
            return await client.answer(to: id)
        }
        _ = await alice.lock(.setLock(lockL, ttl: nil), id: 10)
        _ = await alice.lock(.acquireLock(lockL, retry: false), id: 11)
        #expect(await write(alice, lock: "L", token: 1, id: 12) == .ok(id: 12))
        #expect(await write(alice, lock: "L", token: nil, id: 13) == .ok(id: 13))
        #expect(await write(bob, lock: "L", token: 1, id: 14)?.errorCode == .storageLockNotAcquired)
        #expect(await write(alice, lock: "nope", token: nil, id: 15)?.errorCode == .storageInvalidLockName)
        // Taken away and acquired again: the first acquisition's token is stale, even for alice.
        _ = await bob.lock(.revokeLock(lockL, userId: "alice"), id: 16)
        _ = await alice.lock(.acquireLock(lockL, retry: false), id: 17)
        #expect(await write(alice, lock: "L", token: 1, id: 18)?.errorCode == .storageLockNotAcquired)
        #expect(await write(alice, lock: "L", token: 2, id: 19) == .ok(id: 19))
        alice.connection.close()
        bob.connection.close()
        await server.shutdown()
        group.shutdown()
    }

    /// Moves the manual clock; modules sweep on their next tick.
    func advance(_ clock: ManualClock, by duration: Duration) async {
        clock.advance(by: duration)
        try? await Task.sleep(for: .milliseconds(20))
    }
}
