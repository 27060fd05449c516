import Synchronization
import SwitchboardCore

/// A clock that moves only when a test says so.
///
/// A test waits until the code under test is sleeping (`waitForSleepers`), then moves time
/// (`advance`), which wakes every sleeper whose deadline has come, in deadline order.
public final class ManualClock: SwitchboardClock {
    private struct Sleeper {
        let id: UInt64
        let deadline: Duration
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Duration = .zero
        var nextID: UInt64 = 0
        var sleepers: [Sleeper] = []
        var sleeperWaiters: [(count: Int, waiter: SleeperWaiter)] = []
    }

    private let state = Mutex(State())
    private let wallOrigin: UInt64

    /// Creates a clock at time zero whose wall clock starts at `wallOriginMilliseconds`.
    public init(wallOriginMilliseconds: UInt64 = 1_700_000_000_000) {
        wallOrigin = wallOriginMilliseconds
    }

    public var now: Duration { state.withLock { $0.now } }

    public var wallMilliseconds: UInt64 {
        let now = self.now
        return wallOrigin + UInt64(now.components.seconds) * 1000
            + UInt64(now.components.attoseconds / 1_000_000_000_000_000)
    }

    /// How many tasks are sleeping on this clock right now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(until deadline: Duration) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Bool = state.withLock { state in
                    if Task.isCancelled || deadline <= state.now { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    let ready = state.sleeperWaiters.filter { $0.count <= state.sleepers.count }
                    state.sleeperWaiters.removeAll { $0.count <= state.sleepers.count }
                    for entry in ready { entry.waiter.resume(true) }
                    return false
                }
                if resumeNow {
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume()
                    }
                }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `duration`, waking the sleepers whose deadline has come.
    public func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now += duration
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Returns true once at least `count` tasks are sleeping on this clock, or false when that
    /// has not happened within `timeout` of real time (so a test whose code stopped sleeping fails
    /// instead of hanging). Check the result: a test that goes on after false moves time for nobody.
    public func waitForSleepers(count: Int = 1, timeout: Duration = Patience.standard) async -> Bool {
        let waiter = SleeperWaiter()
        let timer = Task {
            try? await Task.sleep(for: timeout)
            waiter.resume(false)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            waiter.set(continuation)
            let ready = state.withLock { state -> Bool in
                if state.sleepers.count >= count { return true }
                state.sleeperWaiters.append((count, waiter))
                return false
            }
            if ready { waiter.resume(true) }
        }
    }
}

/// One `waitForSleepers` call: resumed once, by the clock or by its timeout, whichever is first.
final class SleeperWaiter: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<Bool, Never>?, result: Bool?)>((nil, nil))

    func set(_ continuation: CheckedContinuation<Bool, Never>) {
        let early = state.withLock { state -> Bool? in
            if let result = state.result { return result }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    func resume(_ result: Bool) {
        let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: result)
    }
}
