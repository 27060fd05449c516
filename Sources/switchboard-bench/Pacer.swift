import Foundation
import Synchronization
import SwitchboardBench

/// Drives publishers at a fixed total rate from one thread, spreading sends round-robin and
/// catching up after a late wake-up. A publisher with `maxInFlight` unanswered publishes is
/// skipped; those skips are reported as sends behind schedule.
final class Pacer: Sendable {
    private let publishers: [Publisher]
    private let rate: Int
    private let maxInFlight: Int
    private let stopRequested = Atomic<Bool>(false)
    private let skippedCount = Atomic<Int>(0)
    private let done = DispatchSemaphore(value: 0)

    init(publishers: [Publisher], rate: Int, maxInFlight: Int) {
        self.publishers = publishers
        self.rate = rate
        self.maxInFlight = maxInFlight
    }

    /// Sends that were due while their publisher's window was full.
    var skipped: Int { skippedCount.load(ordering: .relaxed) }

    func start() {
        let thread = Thread { [self] in pace() }
        thread.name = "bench-pacer"
        thread.start()
    }

    func stop() {
        stopRequested.store(true, ordering: .relaxed)
        done.wait()
    }

    private func pace() {
        let start = MonotonicClock.now()
        var issued = 0
        var next = 0
        while !stopRequested.load(ordering: .relaxed) {
            let elapsed = Double(MonotonicClock.now() - start) / 1e9
            let due = Int(elapsed * Double(rate)) - issued
            for _ in 0..<max(0, due) {
                let publisher = publishers[next]
                next = (next + 1) % publishers.count
                if publisher.inFlight < maxInFlight {
                    publisher.send()
                } else {
                    skippedCount.wrappingAdd(1, ordering: .relaxed)
                }
                issued += 1
            }
            var pause = timespec(tv_sec: 0, tv_nsec: 200_000)
            nanosleep(&pause, nil)
        }
        done.signal()
    }
}
