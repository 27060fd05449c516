import Synchronization
import SwitchboardCore
import SwitchboardStorage
import SwitchboardTestKit

/// A lock module stand-in: who holds which lock, with which fencing token, set by the test.
final class FakeLocks: Module {
    let name = "fake-locks"
    /// (channel, lock name) → the session holding it and its token.
    let holders = Mutex<[String: (session: SessionID, token: UInt64)]>([:])

    func hold(_ lock: String, in channel: ChannelKey, by session: SessionID, token: UInt64 = 1) {
        holders.withLock { $0["\(channel)/\(lock)"] = (session, token) }
    }

    func start(_ context: ModuleContext) async {
        context.bus.handle(CheckLockHolder.self) { [self] request throws(RtmError) in
            guard let holder = holders.withLock({ $0["\(request.channel)/\(request.lockName)"] }) else {
                throw RtmError(.lockNotExist, operation: CheckLockHolder.operation, reason: "no such lock")
            }
            guard holder.session == request.caller.session else {
                throw RtmError(.lockNotAcquired, operation: CheckLockHolder.operation, reason: "held by \(holder.session)")
            }
            return LockHold(fencingToken: holder.token)
        }
    }
}

/// A store that hands every call to an in-memory store, but for those it has its own way with.
protocol ForwardingStore: MetadataStore {
    /// Where the data is.
    var base: InMemoryMetadataStore { get }
}

extension ForwardingStore {
    var location: String { "memory, forwarded" }
    func open() async throws(StorageStartupError) { try await base.open() }
    func read(_ target: MetadataTarget) async throws(RtmError) -> StoredSet? { try await base.read(target) }
    func write(_ write: MetadataWrite, to target: MetadataTarget, limits: Limits) async throws(RtmError) -> MetadataCommit {
        try await base.write(write, to: target, limits: limits)
    }
    func removeExpired(now: WallClockTime) async throws(RtmError) -> [MetadataCommit] { try await base.removeExpired(now: now) }
    func removeItems(of session: SessionID) async throws(RtmError) -> [MetadataCommit] { try await base.removeItems(of: session) }
    func hasItems() async throws(RtmError) -> Bool { try await base.hasItems() }
    func sealingMarker() async throws(RtmError) -> [UInt8]? { try await base.sealingMarker() }
    func setSealingMarker(_ marker: [UInt8]) async throws(RtmError) { try await base.setSealingMarker(marker) }
    func close() async { await base.close() }
}

/// An in-memory store whose next write, once `holdNextWrite()` is called, waits before its atomic
/// step until `release()`: a write queued behind the database thread.
final class GatedStore: ForwardingStore {
    private struct Gate {
        var armed = false
        var held: CheckedContinuation<Void, Never>?
    }

    let base = InMemoryMetadataStore()
    private let gate = Mutex(Gate())

    func holdNextWrite() { gate.withLock { $0.armed = true } }

    /// Waits (real time, bounded) until a write is held.
    func waitUntilHeld() async -> Bool { await eventually { gate.withLock { $0.held != nil } } }

    func release() { gate.withLock { gate in defer { gate.held = nil }; return gate.held }?.resume() }

    func write(_ write: MetadataWrite, to target: MetadataTarget, limits: Limits) async throws(RtmError) -> MetadataCommit {
        await withCheckedContinuation { continuation in
            let wait = gate.withLock { gate in
                defer { gate.armed = false }
                if gate.armed { gate.held = continuation }
                return gate.armed
            }
            if !wait { continuation.resume() }
        }
        return try await base.write(write, to: target, limits: limits)
    }
}

/// A stand-in for encryption at rest: XOR with the key byte and a trailing check byte that covers
/// the associated data, so another key or another place does not open. Enough to see that the
/// store holds no plaintext and that the module asks the bus; real AES-GCM is tested in Crypto.
final class FakeAtRest: Module {
    let name = "fake-at-rest"
    let key: UInt8

    init(key: UInt8) { self.key = key }

    func start(_ context: ModuleContext) async {
        let key = key
        @Sendable func check(_ bytes: [UInt8], _ aad: [UInt8]) -> UInt8 { (bytes + aad).reduce(key) { $0 &+ $1 } }
        context.bus.handle(SealAtRest.self) { request in
            zip(request.plaintexts, request.associatedData).map { plain, aad in
                let body = plain.map { $0 ^ key }
                return body + [check(body, aad)]
            }
        }
        context.bus.handle(OpenAtRest.self) { request throws(RtmError) in
            var opened: [[UInt8]] = []
            for (sealed, aad) in zip(request.sealed, request.associatedData) {
                guard let last = sealed.last, check(Array(sealed.dropLast()), aad) == last else {
                    throw RtmError(.storageOperationFailed, operation: OpenAtRest.operation, reason: "does not open")
                }
                opened.append(sealed.dropLast().map { $0 ^ key })
            }
            return opened
        }
    }
}

extension RecordingOutbox {
    /// The storage events delivered to `session`, in order.
    func storageEvents(to session: SessionID) -> [StorageEvent] {
        pushes(to: session).compactMap { if case .storage(let event) = $0 { event } else { nil } }
    }
}

extension Metadata {
    /// Key → value.
    var values: [String: String] { Dictionary(uniqueKeysWithValues: items.map { ($0.key, $0.value) }) }
}

/// A metadata store that suspends on every call before handing it to an in-memory store: the
/// module must reach metadata only through `MetadataStore`, and keep its order when it suspends.
final class SuspendingMetadataStore: MetadataStore {
    let calls = SuspendingCalls()
    private let base = InMemoryMetadataStore()

    var location: String { "suspending memory" }
    func open() async throws(StorageStartupError) {
        await calls.pause("open")
        try await base.open()
    }
    func read(_ target: MetadataTarget) async throws(RtmError) -> StoredSet? {
        await calls.pause("read")
        return try await base.read(target)
    }
    func write(_ write: MetadataWrite, to target: MetadataTarget, limits: Limits) async throws(RtmError) -> MetadataCommit {
        await calls.pause("write")
        return try await base.write(write, to: target, limits: limits)
    }
    func removeExpired(now: WallClockTime) async throws(RtmError) -> [MetadataCommit] {
        await calls.pause("removeExpired")
        return try await base.removeExpired(now: now)
    }
    func removeItems(of session: SessionID) async throws(RtmError) -> [MetadataCommit] {
        await calls.pause("removeItems")
        return try await base.removeItems(of: session)
    }
    func hasItems() async throws(RtmError) -> Bool {
        await calls.pause("hasItems")
        return try await base.hasItems()
    }
    func sealingMarker() async throws(RtmError) -> [UInt8]? {
        await calls.pause("sealingMarker")
        return try await base.sealingMarker()
    }
    func setSealingMarker(_ marker: [UInt8]) async throws(RtmError) {
        await calls.pause("setSealingMarker")
        try await base.setSealingMarker(marker)
    }
    func close() async {
        await calls.pause("close")
        await base.close()
    }
}
