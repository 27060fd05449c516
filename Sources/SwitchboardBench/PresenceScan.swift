/// What a load generator needs from a `presence` push, read in place without decoding it: the
/// event's type, the occupancy and `more` flag, and every user it names, handed to a visitor as
/// raw bytes (no strings are built, so a 10,000-user interval event costs no allocation).
public struct PresenceScan: Sendable, Equatable {
    /// Where in the event a user was named.
    public enum Place: Sendable, Equatable {
        case snapshot, joined, left, timedOut, stateChanged
        /// The event's `publisher` (the user who joined, left, timed out or changed its state).
        case publisher
    }

    /// `RtmPresenceEventType`: 1 snapshot, 2 interval, 3 join, 4 leave, 5 timeout, 6 state changed.
    public var eventType = 0
    /// `totalOccupancy` (snapshots and interval events), 0 when absent.
    public var totalOccupancy = 0
    /// More parts of this snapshot or interval event follow.
    public var more = false

    /// Scans one server frame: nil unless it is a well-formed `presence` push. `visit` sees the
    /// users of the lists in frame order, then the publisher (when not empty).
    public static func scan(_ bytes: [UInt8], visit: (Place, UserEntry) -> Void) -> PresenceScan? {
        bytes.withUnsafeBytes { raw in scan(raw, visit: visit) }
    }

    private static func scan(_ bytes: UnsafeRawBufferPointer, visit: (Place, UserEntry) -> Void) -> PresenceScan? {
        var cursor = MessagePackCursor(bytes: bytes)
        var result = PresenceScan()
        var isPresence = false
        var publisher: UnsafeRawBufferPointer?
        let read = cursor.readMap { key, cursor in
            if key.equals("t") {
                isPresence = cursor.expect("presence")
                return isPresence
            }
            if key.equals("eventType") { return cursor.integer().map { result.eventType = Int($0) } != nil }
            if key.equals("publisher") { return cursor.string().map { publisher = $0.raw } != nil }
            if key.equals("totalOccupancy") { return cursor.integer().map { result.totalOccupancy = Int($0) } != nil }
            if key.equals("more") { return cursor.bool().map { result.more = $0 } != nil }
            if key.equals("snapshot") { return cursor.userStates { visit(.snapshot, $0) } }
            if key.equals("userStateList") { return cursor.userStates { visit(.stateChanged, $0) } }
            if key.equals("joinUserList") { return cursor.userIds { visit(.joined, $0) } }
            if key.equals("leaveUserList") { return cursor.userIds { visit(.left, $0) } }
            if key.equals("timeoutUserList") { return cursor.userIds { visit(.timedOut, $0) } }
            return cursor.skip(depth: 0)
        }
        guard read, isPresence else { return nil }
        if let publisher, !publisher.isEmpty { visit(.publisher, UserEntry(userId: publisher)) }
        return result
    }
}
