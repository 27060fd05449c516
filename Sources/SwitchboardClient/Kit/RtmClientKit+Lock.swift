import SwitchboardCore
import SwitchboardWire

/// Locks: the `RtmLock` instance and its calls, each an `RtmCall`.
extension RtmClientKit {
    /// The lock instance (`getLock()`): set, acquire, release, revoke, list and remove locks.
    public func getLock() -> RtmLock? { RtmLock(kit: self) }

    /// A lock call whose success is the common response for the lock's channel.
    func lockCall(_ operation: LockOperation, channel: String) -> RtmCall<RtmCommonResponse> {
        call(channel: channel) { .lock(operation) }
    }

    /// `getLocks`.
    func getLocksCall(_ channel: ChannelAddress) -> RtmCall<RtmGetLocksResponse> {
        call({ .lock(.getLocks(channel)) }) { answer throws(RtmErrorInfo) in
            guard case .lock(.locks(let locks)) = answer else {
                throw RtmErrorInfo(.invalidParameter, operation: GetLocks.operation, reason: "unexpected answer")
            }
            return RtmGetLocksResponse(locks)
        }
    }

    /// `acquireLock`: answered at once when the lock is free or refused; with `retry`, when the
    /// server grants it later (or the wait ends), through `LockWaits`.
    func acquireLockCall(_ lock: LockAddress, retry: Bool) -> RtmCall<RtmAcquireLockResponse> {
        RtmCall(kit: self) { engine, resolve in
            let waits = engine.lockWaits
            let respond: LockWaits.Resolver = { result in
                resolve(result.map { RtmAcquireLockResponse(lock, fencingToken: $0) })
            }
            guard waits.add(lock, respond) else {
                return resolve(.failure(RtmErrorInfo(
                    .lockOperationPerforming, operation: AcquireLock.operation, reason: "already waiting for \(lock.name)")))
            }
            await engine.call(.lock(.acquireLock(lock, retry: retry))) { outcome in waits.answered(lock, outcome) }
        }
    }
}
