import Synchronization
import SwitchboardBench

/// Logs connections in and out at a fixed rate: each one connects, logs in, subscribes to a
/// channel nobody publishes on, and logs out.
final class Churn: Sendable {
    struct Result {
        var completed: Int
        var failed: Int
        var firstError: String?
    }

    private struct State {
        var completed = 0
        var failed = 0
        var firstError: String?
        var started = 0
    }

    private let rate: Int
    private let url: String
    private let tag: String
    private let context: RunContext
    private let state = Mutex(State())
    private let driver = Mutex<Task<Void, Never>?>(nil)

    init(rate: Int, url: String, tag: String, context: RunContext) {
        self.rate = rate
        self.url = url
        self.tag = tag
        self.context = context
    }

    func start() {
        let task = Task { [self] in
            await withTaskGroup(of: Void.self) { group in
                let start = MonotonicClock.now()
                var issued = 0
                while !Task.isCancelled {
                    let due = Int(Double(MonotonicClock.now() - start) / 1e9 * Double(rate)) - issued
                    for _ in 0..<max(0, due) {
                        let number = issued
                        issued += 1
                        group.addTask { await self.cycle(number) }
                    }
                    try? await Task.sleep(for: .milliseconds(5))
                }
                await group.waitForAll()
            }
        }
        driver.withLock { $0 = task }
    }

    /// Cycles completed so far.
    var completed: Int { state.withLock { $0.completed } }

    /// Stops starting new cycles, waits for those under way, and reports.
    func stop() async -> Result {
        let task = driver.withLock { $0 }
        task?.cancel()
        await task?.value
        return state.withLock { Result(completed: $0.completed, failed: $0.failed, firstError: $0.firstError) }
    }

    private func cycle(_ number: Int) async {
        let client = BenchClient(userId: "c\(number)-\(tag)", run: context)
        do {
            try await client.connectAndLogIn(url: url)
            try await client.subscribe("churn-\(tag)")
            try await client.logOut()
            state.withLock { $0.completed += 1 }
        } catch {
            client.close()
            state.withLock { state in
                state.failed += 1
                if state.firstError == nil { state.firstError = "\(error)" }
            }
        }
    }
}
