import SwitchboardCore
import SwitchboardWire

/// The lock feature: set, remove, acquire, release, revoke, list, as lock-module requests.
///
/// An acquire that must wait is answered at once (`acquired: false`); the lock arrives later as
/// a `lockGranted` push. So a wait never holds up the connection's other requests, which are
/// answered in order, and it survives a lost connection: the push is kept for a resume.
enum LockBinding: FeatureBinding {
    static let unavailable: RtmErrorCode? = .lockNotAvailable

    static func answer(_ operation: LockOperation, caller: Caller, bus: EventBus) async throws(RtmError) -> Answer {
        switch operation {
        case .setLock(let lock, let ttl): _ = try await bus.request(SetLock(caller: caller, lock: lock, ttl: ttl))
        case .removeLock(let lock): _ = try await bus.request(RemoveLock(caller: caller, lock: lock))
        case .acquireLock(let lock, let retry):
            return .lock(.acquire(try await bus.request(AcquireLock(caller: caller, lock: lock, retry: retry))))
        case .releaseLock(let lock): _ = try await bus.request(ReleaseLock(caller: caller, lock: lock))
        case .revokeLock(let lock, let userId): _ = try await bus.request(RevokeLock(caller: caller, lock: lock, userId: userId))
        case .getLocks(let channel): return .lock(.locks(try await bus.request(GetLocks(caller: caller, channel: channel))))
        }
        return .done
    }
}
