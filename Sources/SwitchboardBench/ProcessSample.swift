import Glibc

/// CPU time and memory of one process (or thread), read from `/proc`.
public struct ProcessSample: Sendable, Equatable {
    /// User plus system CPU time, in seconds.
    public var cpuSeconds: Double
    /// Resident set size in bytes (0 for a thread sample).
    public var residentBytes: Int

    /// A sample of `cpuSeconds` and `residentBytes` (a sum over several processes, say).
    public init(cpuSeconds: Double, residentBytes: Int) {
        self.cpuSeconds = cpuSeconds
        self.residentBytes = residentBytes
    }

    /// A sample of process `pid` (`"self"` for this one); nil when it cannot be read.
    public static func read(pid: String) -> ProcessSample? {
        guard let stat = readText("/proc/\(pid)/stat"), let cpu = cpuSeconds(fromStat: stat) else { return nil }
        let resident = readText("/proc/\(pid)/status").flatMap(residentBytes(fromStatus:)) ?? 0
        return ProcessSample(cpuSeconds: cpu, residentBytes: resident)
    }

    /// CPU seconds of every thread of this process, by thread id.
    public static func threadsOfSelf() -> [Int: Double] {
        guard let directory = opendir("/proc/self/task") else { return [:] }
        defer { closedir(directory) }
        var result: [Int: Double] = [:]
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let tid = Int(name), let stat = readText("/proc/self/task/\(name)/stat"),
                let cpu = cpuSeconds(fromStat: stat)
            else { continue }
            result[tid] = cpu
        }
        return result
    }

    /// The machine's one-minute load average: busy machines make noisy numbers.
    public static func loadAverage() -> Double? {
        readText("/proc/loadavg")?.split(separator: " ").first.flatMap { Double($0) }
    }

    /// utime + stime of a `/proc/PID/stat` line, in seconds.
    public static func cpuSeconds(fromStat text: String, ticksPerSecond: Double = Double(sysconf(Int32(_SC_CLK_TCK)))) -> Double? {
        // The command name (field 2) may contain spaces and parentheses; fields after the last ")"
        // start with field 3, the state.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / ticksPerSecond
    }

    /// `VmRSS` of a `/proc/PID/status` text, in bytes.
    public static func residentBytes(fromStatus text: String) -> Int? {
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count >= 2, let kilobytes = Int(parts[1]) else { return nil }
            return kilobytes * 1024
        }
        return nil
    }

    static func readText(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
