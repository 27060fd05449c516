import CLinux

/// How many malloc arenas the `switchboard` process's threads share.
///
/// glibc gives a thread that allocates while another holds the arena an arena of its own, up to
/// eight per core. The server makes a connection's objects on its event loop and grows and frees
/// its modules' tables on the concurrency pool's threads, so each arena grows to its own peak and
/// keeps free memory the other threads cannot use: 10,000 idle subscribed connections held about
/// 300 bytes more each that way (docs/BENCHMARKS.md). One shared arena keeps less apart, and on the
/// benchmarks allocation costs the same: a message allocates little, and each thread's own malloc
/// cache serves most of it without the arena's lock.
public enum MallocArenas {
    /// The arenas the process shares unless its environment says otherwise.
    public static let standard = 1

    /// The limit to set for a process started with `environment`: `standard`, or nil when the
    /// environment sets glibc's own (`MALLOC_ARENA_MAX`, or `glibc.malloc.arena_max` in
    /// `GLIBC_TUNABLES`), which then stands.
    public static func wanted(environment: [String: String]) -> Int? {
        guard environment["MALLOC_ARENA_MAX"] == nil,
            environment["GLIBC_TUNABLES"]?.contains("glibc.malloc.arena_max") != true
        else { return nil }
        return standard
    }

    /// Sets the limit `wanted(environment:)` names; returns it, or nil when it set none. Called
    /// first in `main`, before a second thread allocates: glibc fixes its limit the first time a
    /// thread needs an arena, and the arenas made before stay.
    @discardableResult
    public static func limit(environment: [String: String]) -> Int? {
        guard let arenas = wanted(environment: environment) else { return nil }
        return switchboard_limit_malloc_arenas(Int32(arenas)) == 1 ? arenas : nil
    }
}
