import Synchronization
import Testing
import SwitchboardCore
import SwitchboardStorage
import SwitchboardStorageContract
import SwitchboardTestKit

/// A lock checker whose answer waits until `release()`: a write that names a lock is held after
/// it read its app's limits and before the store applies them.
private final class GatedLockCheck: Module {
    let name = "gated-locks"
    private let arrivals = AsyncStream<Void>.makeStream()
    private let releases = AsyncStream<Void>.makeStream()

    func start(_ context: ModuleContext) async {
        context.bus.handle(CheckLockHolder.self) { [arrivals, releases] _ in
            arrivals.continuation.yield()
            for await _ in releases.stream { break }
            return LockHold(fencingToken: 1)
        }
    }

    /// Returns once a lock check waits.
    func arrived() async { for await _ in arrivals.stream { break } }

    /// Lets the waiting check answer.
    func release() { releases.continuation.yield() }
}

/// A metadata write reads its app's limits once, when it starts: a new edition of the limits
/// book (a reload) does not reach a write already under way, and reaches the next one.
@Suite(.timeLimit(.minutes(1))) struct StorageLimitsEditionTests {
    static func limits(setMaxBytes: Int) -> Limits {
        var limits = Limits()
        limits.storage.setMaxBytes = setMaxBytes
        return limits
    }

    @Test func aWriteKeepsTheLimitsItStartedWithAndTheNextWriteHasTheNewOnes() async throws {
        let gate = GatedLockCheck()
        let storage = Storage(store: InMemoryMetadataStore())
        let harness = await ModuleHarness(modules: [gate, storage])
        try await storage.open()
        let book = harness.context.limitsBook
        book.replace(with: LimitsBook.Edition(apps: ["app": Self.limits(setMaxBytes: 1000)]))
        let alice = Caller(app: "app", userId: "alice", session: SessionID(1))
        func set(_ key: String, lock: String?) -> SetChannelMetadata {
            SetChannelMetadata(
                caller: alice, channelType: .message, channelName: "room",
                data: Metadata(majorRevision: -1, items: [MetadataItem(key: key, value: String(repeating: "v", count: 20))]),
                options: MetadataOptions(), lockName: lock)
        }
        let bus = harness.bus
        let started = Task { try await bus.request(set("a", lock: "manage")) }
        await gate.arrived()
        book.replace(with: LimitsBook.Edition(apps: ["app": Self.limits(setMaxBytes: 10)]))
        gate.release()
        _ = try await started.value
        #expect(await errorCode { _ = try await bus.request(set("b", lock: nil)) } == .storageMetadataLengthOverflow)
        // Another app has the server's limits.
        let other = Caller(app: "other", userId: "alice", session: SessionID(2))
        _ = try await bus.request(
            SetChannelMetadata(
                caller: other, channelType: .message, channelName: "room",
                data: Metadata(majorRevision: -1, items: [MetadataItem(key: "b", value: String(repeating: "v", count: 20))]),
                options: MetadataOptions(), lockName: nil))
        await harness.stop()
    }
}
