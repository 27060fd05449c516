import CLinux
import Foundation
import Synchronization

/// A fixed set of event loops; new connections are spread over them round-robin.
public final class EventLoopGroup: Sendable {
    /// The loops, each running on its own thread.
    public let loops: [EventLoop]
    private let counter = Atomic<Int>(0)
    private let isShutDown = Atomic<Bool>(false)

    /// One loop per processor this process may run on: the CPUs of its affinity mask (a server
    /// started under `taskset -c 0` runs one loop, not one per core of the machine, which would
    /// have its loops take turns on that one core and hand each other work through the scheduler),
    /// never more than the machine's active processors, at least one.
    public static var threadsPerAvailableProcessor: Int {
        let machine = ProcessInfo.processInfo.activeProcessorCount
        let allowed = Int(switchboard_cpus_allowed())
        return max(1, allowed > 0 ? min(allowed, machine) : machine)
    }

    /// Starts `threads` event loops (one per processor this process may run on by default).
    public init(threads: Int = EventLoopGroup.threadsPerAvailableProcessor) throws {
        var loops: [EventLoop] = []
        for index in 0..<max(1, threads) {
            loops.append(try EventLoop(name: "switchboard-loop-\(index)"))
        }
        self.loops = loops
        for loop in loops { loop.start() }
    }

    /// The loop for the next connection (round-robin).
    public func next() -> EventLoop {
        let index = counter.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[index % loops.count]
    }

    /// True once `shutdown()` has been called.
    public var isShuttingDown: Bool { isShutDown.load(ordering: .acquiring) }

    /// Closes every socket still registered and joins the loop threads. Must not be called
    /// from a loop thread; calling it again does nothing.
    public func shutdown() {
        guard !isShutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for loop in loops { loop.shutdownAndWait() }
    }
}
