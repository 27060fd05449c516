import Testing
import SwitchboardCommandLine

/// The process shares one malloc arena unless its environment sets glibc's own limit.
@Suite(.timeLimit(.minutes(1))) struct MallocArenasTests {
    @Test func oneArenaUnlessTheEnvironmentSetsGlibcsOwnLimit() {
        #expect(MallocArenas.wanted(environment: [:]) == 1)
        #expect(MallocArenas.wanted(environment: ["GLIBC_TUNABLES": "glibc.malloc.tcache_count=16"]) == 1)
        #expect(MallocArenas.wanted(environment: ["SWITCHBOARD_LISTEN": "0.0.0.0:9100"]) == 1)
        #expect(MallocArenas.wanted(environment: ["MALLOC_ARENA_MAX": "8"]) == nil)
        #expect(MallocArenas.wanted(environment: ["GLIBC_TUNABLES": "glibc.malloc.arena_max=4"]) == nil)
        #expect(
            MallocArenas.wanted(environment: ["GLIBC_TUNABLES": "glibc.malloc.tcache_count=16:glibc.malloc.arena_max=2"]) == nil)
    }
}
