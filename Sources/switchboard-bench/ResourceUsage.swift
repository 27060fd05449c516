import Glibc
import SwitchboardBench

/// The load generator's view of CPU and memory: its own and, given pids, the server's (the sum
/// over every node of a cluster).
struct ResourceUsage {
    let serverPids: [Int]

    struct Snapshot {
        var time: UInt64
        var server: ProcessSample?
        var bench: ProcessSample?
        var threads: [Int: Double]
    }

    func snapshot() -> Snapshot {
        Snapshot(
            time: MonotonicClock.now(), server: serverSample(),
            bench: ProcessSample.read(pid: "self"), threads: ProcessSample.threadsOfSelf())
    }

    /// The servers' CPU time and memory together; nil when one cannot be read (or none is given).
    private func serverSample() -> ProcessSample? {
        guard !serverPids.isEmpty else { return nil }
        var total = ProcessSample(cpuSeconds: 0, residentBytes: 0)
        for pid in serverPids {
            guard let sample = ProcessSample.read(pid: String(pid)) else { return nil }
            total.cpuSeconds += sample.cpuSeconds
            total.residentBytes += sample.residentBytes
        }
        return total
    }

    /// CPU used between two snapshots.
    struct Interval {
        var seconds: Double
        var serverCPU: Double?
        var benchCPU: Double
        var busiestThread: Double

        init(from start: Snapshot, to end: Snapshot) {
            seconds = Double(end.time - start.time) / 1e9
            if let before = start.server, let after = end.server { serverCPU = after.cpuSeconds - before.cpuSeconds }
            benchCPU = (end.bench?.cpuSeconds ?? 0) - (start.bench?.cpuSeconds ?? 0)
            var busiest = 0.0
            for (tid, cpu) in end.threads { busiest = max(busiest, cpu - (start.threads[tid] ?? 0)) }
            busiestThread = seconds > 0 ? busiest / seconds : 0
        }
    }

    /// Raises this process's open-file limit as far as allowed; returns the limit in force.
    static func raiseOpenFileLimit(wanted: Int) -> Int {
        var limit = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0 else { return 0 }
        var raised = limit
        raised.rlim_max = max(limit.rlim_max, rlim_t(wanted))
        raised.rlim_cur = raised.rlim_max
        if setrlimit(resource, &raised) != 0 {
            raised = limit
            raised.rlim_cur = limit.rlim_max
            _ = setrlimit(resource, &raised)
        }
        _ = getrlimit(resource, &limit)
        return Int(limit.rlim_cur)
    }
}
