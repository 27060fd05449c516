import Synchronization
import Testing
import SwitchboardCore
import SwitchboardLock
import SwitchboardTestKit

/// Twenty clients race for one lock, with random acquires, releases, withdrawals, unsubscribes,
/// lost connections, resumes, timeouts and logouts, and time passing on the manual clock. After
/// every step: the lock's events alternate acquired/released with growing tokens, at most one
/// client believes it owns the lock and the server agrees, and every grant goes to the client
/// that waited longest. At the end everyone still in line gets the lock in turn.
@Suite(.timeLimit(.minutes(2))) struct LockPropertyTests {
    /// One racing client as it sees itself.
    struct Client {
        var caller: Caller
        var connected = true
        var inChannel = true
        var waiting = false
        /// The fencing token of the acquisition it believes it holds.
        var holds: UInt64?
    }

    /// The test's model of the race and the checks it makes.
    struct Race {
        let world: LockWorld
        let watcher = Caller(app: "app", userId: "watcher", session: SessionID(1))
        var clients: [Client]
        var line: [SessionID] = []
        var cursors: [SessionID: Int] = [:]
        var owner: (user: UserID, token: UInt64)?
        var lastToken: UInt64 = 0
        var nextSession: UInt64 = 100
        var grants = 0
        var expiries = 0
        var failedWaits = 0

        init(world: LockWorld, count: Int) {
            self.world = world
            clients = (0..<count).map { Client(caller: Caller(app: "app", userId: "c\($0)", session: SessionID(UInt64(10 + $0)))) }
        }

        func acquire(_ client: Client, retry: Bool) async throws -> LockAcquisition {
            try await world.bus.request(
                AcquireLock(caller: client.caller, lock: LockAddress(.message, "room", "L"), retry: retry))
        }

        mutating func step(_ index: Int, _ random: inout SeededGenerator) async throws {
            var client = clients[index]
            let roll = Int.random(in: 0..<100, using: &random)
            if !client.connected {
                if roll < 50 {
                    await world.bus.publishAndWait(SessionResumed(caller: client.caller))
                    client.connected = true
                } else if roll < 70 {
                    await world.bus.publishAndWait(SessionTimedOut(caller: client.caller))
                    end(&client, reason: .timedOut)
                    await world.bus.publishAndWait(SessionClosed(caller: client.caller, reason: .timedOut))
                    client = fresh(client)
                }
            } else if !client.inChannel {
                await world.join(client.caller, features: [.message])
                client.inChannel = true
            } else if client.holds != nil {
                if roll < 50 {
                    _ = try await world.bus.request(
                        ReleaseLock(caller: client.caller, lock: LockAddress(.message, "room", "L")))
                    client.holds = nil
                } else if roll < 70 {
                    await world.bus.publishAndWait(SessionSuspended(caller: client.caller))
                    client.connected = false
                } else if roll < 85 {
                    await world.leave(client.caller)
                    client.inChannel = false
                } else {
                    end(&client, reason: .logout)
                    await world.bus.publishAndWait(SessionClosed(caller: client.caller, reason: .logout))
                    client = fresh(client)
                }
            } else if client.waiting {
                if roll < 15 {
                    _ = try await world.bus.request(
                        ReleaseLock(caller: client.caller, lock: LockAddress(.message, "room", "L")))
                } else if roll < 30 {
                    await world.leave(client.caller)
                    client.inChannel = false
                } else if roll < 40 {
                    await world.bus.publishAndWait(SessionSuspended(caller: client.caller))
                    client.connected = false
                }
            } else {
                do {
                    switch try await acquire(client, retry: roll < 70) {
                    case .acquired(let token): client.holds = token
                    case .queued:
                        client.waiting = true
                        line.append(client.caller.session)
                    }
                } catch let error as RtmError where error.code == .lockAcquireFailed {
                    // Held by someone else and this client would not wait.
                }
            }
            clients[index] = client
        }

        /// The session of `client` ends: it leaves the line silently.
        mutating func end(_ client: inout Client, reason: SessionEndReason) {
            line.removeAll { $0 == client.caller.session }
            client.waiting = false
        }

        /// The same user logs in again, as a new session, not in the channel yet.
        mutating func fresh(_ client: Client) -> Client {
            nextSession += 1
            return Client(caller: Caller(app: "app", userId: client.caller.userId, session: SessionID(nextSession)), inChannel: false)
        }

        /// Reads what every session was pushed since the last look and checks the invariants.
        mutating func observe() async throws {
            for event in newPushes(to: watcher).compactMap({ if case .event(let event) = $0 { event } else { nil } }) {
                guard let detail = event.locks.first, event.eventType != .snapshot, event.eventType != .lockSet else { continue }
                switch event.eventType {
                case .lockAcquired:
                    #expect(owner == nil, "acquired by \(detail.owner) while \(String(describing: owner)) owns it")
                    #expect(detail.fencingToken > lastToken, "tokens only grow")
                    owner = (detail.owner, detail.fencingToken)
                    lastToken = detail.fencingToken
                case .lockReleased:
                    #expect(owner?.user == detail.owner && owner?.token == detail.fencingToken)
                    owner = nil
                    // A release of an owner still away is its ttl running out.
                    if clients.contains(where: { $0.holds == detail.fencingToken && !$0.connected }) { expiries += 1 }
                    // The owner hears it lost the lock.
                    for index in clients.indices where clients[index].holds == detail.fencingToken { clients[index].holds = nil }
                default:
                    Issue.record("unexpected \(event.eventType)")
                }
            }
            for index in clients.indices {
                for push in newPushes(to: clients[index].caller) {
                    switch push {
                    case .granted(_, let token):
                        #expect(line.first == clients[index].caller.session, "the longest waiter gets the lock")
                        #expect(clients[index].waiting)
                        line.removeFirst()
                        grants += 1
                        clients[index].waiting = false
                        clients[index].holds = token
                    case .waitFailed:
                        #expect(clients[index].waiting)
                        line.removeAll { $0 == clients[index].caller.session }
                        clients[index].waiting = false
                        failedWaits += 1
                    case .event:
                        Issue.record("clients did not ask for lock events")
                    }
                }
            }
            let believers = clients.filter { $0.holds != nil }
            #expect(believers.count <= 1, "two owners at once: \(believers.map(\.caller))")
            #expect(believers.first?.holds == owner?.token)
            for believer in believers where believer.connected {
                let hold = try await world.bus.request(
                    CheckLockHolder(caller: believer.caller, channel: believer.caller.channel(.message, "room"), lockName: "L",
                                    fencingToken: believer.holds))
                #expect(hold.fencingToken == believer.holds)
            }
            #expect(world.store.lineLength(of: "L", in: watcher.channel(.message, "room")) == line.count)
        }

        mutating func newPushes(to caller: Caller) -> [LockPush] {
            let all = world.pushes(to: caller)
            let seen = cursors[caller.session] ?? 0
            cursors[caller.session] = all.count
            return Array(all[seen...])
        }

        /// Everyone comes back; owners release until nobody waits.
        mutating func drain() async throws {
            for index in clients.indices where !clients[index].connected {
                await world.bus.publishAndWait(SessionResumed(caller: clients[index].caller))
                clients[index].connected = true
            }
            try await observe()
            var rounds = 0
            while let index = clients.firstIndex(where: { $0.holds != nil }), rounds < 100 {
                _ = try await world.bus.request(
                    ReleaseLock(caller: clients[index].caller, lock: LockAddress(.message, "room", "L")))
                clients[index].holds = nil
                try await observe()
                rounds += 1
            }
            #expect(line.isEmpty, "every waiter got the lock")
            #expect(clients.allSatisfy { !$0.waiting })
            #expect(owner == nil)
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func twentyClientsNeverSeeTwoOwnersAndNoWaiterStarves(seed: UInt64) async throws {
        let world = await LockWorld.start()
        var race = Race(world: world, count: 20)
        await world.join(race.watcher)
        try await world.set("L", by: race.watcher, ttl: 10)
        for client in race.clients { await world.join(client.caller, features: [.message]) }
        var random = SeededGenerator(seed: seed)
        for _ in 0..<600 {
            if Int.random(in: 0..<10, using: &random) == 0 {
                await world.advance(by: .milliseconds(Int64.random(in: 500...15_000, using: &random)))
            } else {
                try await race.step(Int.random(in: 0..<race.clients.count, using: &random), &random)
            }
            try await race.observe()
        }
        // The schedule reached every path: waits granted, lost owners expiring, waits ended.
        #expect(race.grants > 10 && race.expiries > 0 && race.failedWaits > 0, "\(race.grants) \(race.expiries) \(race.failedWaits)")
        try await race.drain()
        await world.harness.stop()
    }

    @Test func concurrentClientsAreNeverInsideTogether() async throws {
        let world = await LockWorld.start()
        let admin = Caller(app: "app", userId: "admin", session: SessionID(1))
        await world.join(admin, features: [.message])
        try await world.set("L", by: admin)
        let inside = InsideCounter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                let caller = Caller(app: "app", userId: "c\(index)", session: SessionID(UInt64(10 + index)))
                group.addTask {
                    await world.join(caller, features: [.message])
                    var granted = 0
                    for _ in 0..<10 {
                        if try await world.acquire("L", by: caller, retry: true) == .queued {
                            while world.grants(to: caller).count == granted { await Task.yield() }
                            granted += 1
                        }
                        #expect(inside.enter() == 1)
                        await Task.yield()
                        inside.leave()
                        try await world.release("L", by: caller)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(inside.maximum == 1)
        await world.harness.stop()
    }
}

/// Counts the clients inside the critical section, and the most there ever were.
final class InsideCounter: Sendable {
    private let state = Mutex<(now: Int, maximum: Int)>((0, 0))

    /// One more inside; returns how many are inside now.
    func enter() -> Int {
        state.withLock { state in
            state.now += 1
            state.maximum = max(state.maximum, state.now)
            return state.now
        }
    }

    /// One fewer inside.
    func leave() { state.withLock { $0.now -= 1 } }

    /// The most that were ever inside at once.
    var maximum: Int { state.withLock { $0.maximum } }
}
