/// What a load generator needs from lock frames, read in place: an `acquireLock` answer (whether
/// the lock is the caller's now, and its fencing token) or a `lockGranted` push (the lock came to
/// a waiter).
public enum LockScan: Equatable, Sendable {
    /// `{"t": "ok", "result": "acquireLock", …}` answering request `id`.
    case acquireAnswer(id: UInt32, acquired: Bool, fencingToken: UInt64?)
    /// `{"t": "lockGranted", …}`: the waiting session owns the lock now.
    case granted(fencingToken: UInt64)
    /// `{"t": "lockWaitFailed", …}`: the wait ended without the lock.
    case waitFailed

    /// Scans one server frame; nil unless it is one of the three, well formed.
    public static func scan(_ bytes: [UInt8]) -> LockScan? {
        bytes.withUnsafeBytes { raw in scan(raw) }
    }

    private enum Kind { case answer, granted, waitFailed, other }

    private static func scan(_ bytes: UnsafeRawBufferPointer) -> LockScan? {
        var cursor = MessagePackCursor(bytes: bytes)
        var kind = Kind.other
        var isAcquire = false
        var id: UInt32?
        var acquired: Bool?
        var token: UInt64?
        let read = cursor.readMap { key, cursor in
            if key.equals("t") {
                guard let type = cursor.string() else { return false }
                kind = type.equals("ok") ? .answer : type.equals("lockGranted") ? .granted
                    : type.equals("lockWaitFailed") ? .waitFailed : .other
                return true
            }
            if key.equals("result") {
                isAcquire = cursor.expect("acquireLock")
                return true
            }
            if key.equals("id") { return cursor.requestId().map { id = $0 } != nil }
            if key.equals("acquired") { return cursor.bool().map { acquired = $0 } != nil }
            if key.equals("fencingToken") { return cursor.unsigned().map { token = $0 } != nil }
            return cursor.skip(depth: 0)
        }
        guard read else { return nil }
        switch kind {
        case .answer:
            guard isAcquire, let id, let acquired else { return nil }
            return .acquireAnswer(id: id, acquired: acquired, fencingToken: token)
        case .granted:
            return token.map { .granted(fencingToken: $0) }
        case .waitFailed:
            return .waitFailed
        case .other:
            return nil
        }
    }
}
