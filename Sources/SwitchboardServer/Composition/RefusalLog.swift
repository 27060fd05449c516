import Synchronization
import SwitchboardCore

/// Logs refused and policy-closed connections, one line each with the peer's address and the
/// reason, but at most `linesPerSecond` a second: a flood of refusals must not flood the log.
/// Lines held back are counted and reported in the next second that logs. Every refusal, logged
/// or not, is counted in the metrics by its reason.
final class RefusalLog: Sendable {
    private struct Window {
        var second: Int64 = .min
        var lines = 0
        var suppressed = 0
    }

    private let log: ServerLog
    private let clock: any SwitchboardClock
    private let linesPerSecond: Int
    private let metrics: ServerMetrics?
    private let window = Mutex(Window())

    init(log: ServerLog, clock: any SwitchboardClock, linesPerSecond: Int = 20, metrics: ServerMetrics? = nil) {
        self.log = log
        self.clock = clock
        self.linesPerSecond = linesPerSecond
        self.metrics = metrics
    }

    /// Records that the connection from `address` ("ip:port") was refused or closed for `reason`.
    func refused(_ address: String, _ reason: String) {
        metrics?.refused(RefusalReason(describing: reason))
        let second = clock.now.components.seconds
        let (write, suppressedBefore) = window.withLock { window -> (Bool, Int) in
            var suppressedBefore = 0
            if second != window.second {
                suppressedBefore = window.suppressed
                window = Window(second: second)
            }
            guard window.lines < linesPerSecond else {
                window.suppressed += 1
                return (false, suppressedBefore)
            }
            window.lines += 1
            return (true, suppressedBefore)
        }
        if suppressedBefore > 0 { log(.info, "refused \(suppressedBefore) more connections (log lines held back)") }
        if write { log(.info, "refused \(address): \(reason)") }
    }
}
