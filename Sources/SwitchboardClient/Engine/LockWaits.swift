import SwitchboardCore
import SwitchboardWire

/// The `acquireLock(retry: true)` calls that wait for their lock. The server answers such a call
/// at once and grants the lock later with a push (`lockGranted`, or `lockWaitFailed`); the call
/// returns then. A wait is noted before its request goes out, since the grant may overtake the answer.
///
/// After a reconnect that lost the session the server has forgotten the waits: each is sent again,
/// so it keeps waiting, at the end of the line, as the reference's "retry until the acquisition
/// succeeds or the user leaves the channel" asks. A logout ends every wait.
final class LockWaits: RestorableState {
    /// Gets the acquisition's fencing token, or why the wait ended.
    typealias Resolver = @Sendable (Result<UInt64, RtmErrorInfo>) -> Void

    private let waits = Locked<[LockAddress: Resolver]>([:])

    /// Waits hold no channel of their own (their channels are subscribed or joined elsewhere).
    var channels: [String] { [] }

    /// Notes a wait for `lock`; false when this client already waits for it.
    func add(_ lock: LockAddress, _ resolve: @escaping Resolver) -> Bool {
        waits.withLock { waits in
            guard waits[lock] == nil else { return false }
            waits[lock] = resolve
            return true
        }
    }

    /// Ends the wait for `lock` with `result`; false when there was none.
    @discardableResult
    func end(_ lock: LockAddress, _ result: Result<UInt64, RtmErrorInfo>) -> Bool {
        guard let resolve = waits.withLock({ $0.removeValue(forKey: lock) }) else { return false }
        resolve(result)
        return true
    }

    /// Ends the wait for `lock` as the answer to its acquire says: at once when it was acquired or
    /// refused; nothing when it is queued (a push ends it).
    func answered(_ lock: LockAddress, _ outcome: Result<Answer, RtmErrorInfo>) {
        switch outcome {
        case .success(.lock(.acquire(.acquired(let token)))): end(lock, .success(token))
        case .success(.lock(.acquire(.queued))): break
        // The server has this session in line already, from a call whose answer a dropped
        // connection lost: the grant will come for this wait.
        case .failure(let error) where error.errorCode == .lockOperationPerforming: break
        case .success: end(lock, .failure(RtmErrorInfo(.invalidParameter, operation: AcquireLock.operation, reason: "unexpected answer")))
        case .failure(let error): end(lock, .failure(error))
        }
    }

    func restore(_ send: @Sendable (ClientOperation) async -> Result<Answer, RtmErrorInfo>) async -> [String] {
        for lock in waits.withLock({ Array($0.keys) }) {
            answered(lock, await send(.lock(.acquireLock(lock, retry: true))))
        }
        return []
    }

    func reset() {
        let ended = waits.withLock { waits in
            defer { waits.removeAll() }
            return Array(waits.values)
        }
        let error = RtmErrorInfo(.lockAcquireFailed, operation: AcquireLock.operation, reason: "the session ended while waiting for the lock")
        for resolve in ended { resolve(.failure(error)) }
    }
}
