import Synchronization
import SwitchboardCore
import SwitchboardStorage
import SwitchboardTestKit

/// A lock module stand-in: who holds which lock, set by the test.
final class FakeLocks: Module {
    let name = "fake-locks"
    /// (channel, lock name) → the session holding it.
    let holders = Mutex<[String: SessionID]>([:])

    func hold(_ lock: String, in channel: ChannelKey, by session: SessionID) {
        holders.withLock { $0["\(channel)/\(lock)"] = session }
    }

    func start(_ context: ModuleContext) async {
        context.bus.handle(CheckLockHolder.self) { [self] request throws(RtmError) in
            guard let holder = holders.withLock({ $0["\(request.channel)/\(request.lockName)"] }) else {
                throw RtmError(.lockNotExist, operation: CheckLockHolder.operation, reason: "no such lock")
            }
            guard holder == request.caller.session else {
                throw RtmError(.lockNotAcquired, operation: CheckLockHolder.operation, reason: "held by \(holder)")
            }
            return LockHold(fencingToken: 1)
        }
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

/// Waits (real time, bounded) until `condition` holds.
func eventually(_ timeout: Duration = .seconds(5), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}
