import Glibc

/// `CLOCK_MONOTONIC` in nanoseconds: one origin for every process on the machine, so a
/// timestamp taken by a publisher can be compared with the receiver's clock in another process.
public enum MonotonicClock {
    /// Nanoseconds since the system's monotonic origin.
    public static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }
}
