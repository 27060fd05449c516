import Synchronization
import Testing
import SwitchboardCore

/// `RealTimeRetry`: a step is run again until it succeeds, at most as many times as asked, and the
/// last failure is what the caller gets.
@Suite(.timeLimit(.minutes(1))) struct RealTimeRetryTests {
    @Test func aStepThatSucceedsOnItsThirdAttemptIsRunThreeTimes() async throws {
        let attempts = Mutex(0)
        let value = try await RealTimeRetry.run(attempts: 5, pause: .milliseconds(1)) { () throws(RtmError) -> String in
            let attempt = attempts.withLock { count -> Int in
                count += 1
                return count
            }
            guard attempt == 3 else { throw RtmError(.presenceNotConnected, operation: "step", reason: "attempt \(attempt)") }
            return "done"
        }
        #expect(value == "done")
        #expect(attempts.withLock { $0 } == 3)
    }

    @Test func aStepThatNeverSucceedsIsRunAsOftenAsAskedAndItsLastFailureThrown() async {
        let attempts = Mutex(0)
        do {
            _ = try await RealTimeRetry.run(attempts: 4, pause: .milliseconds(1)) { () throws(RtmError) -> Int in
                let attempt = attempts.withLock { count -> Int in
                    count += 1
                    return count
                }
                throw RtmError(.presenceNotConnected, operation: "step", reason: "attempt \(attempt)")
            }
            Issue.record("a step that always fails succeeded")
        } catch {
            #expect(error.reason == "attempt 4")
        }
        #expect(attempts.withLock { $0 } == 4)
    }

    @Test func aCancelledWaitStopsAtOnce() async {
        let attempts = Mutex(0)
        let task = Task {
            try await RealTimeRetry.run(attempts: 1000, pause: .seconds(10)) { () throws(RtmError) -> Int in
                attempts.withLock { $0 += 1 }
                throw RtmError(.presenceNotConnected, operation: "step", reason: "never")
            }
        }
        try? await Task.sleep(for: .milliseconds(50))
        task.cancel()
        #expect(await task.result.map { _ in 0 }.isFailure)
        #expect(attempts.withLock { $0 } == 1)
    }
}

extension Result {
    fileprivate var isFailure: Bool {
        if case .failure = self { true } else { false }
    }
}
