/// One `{userId, states}` map of a presence push or a `whoNow` answer, read in place: the bytes
/// are valid only while the scan that found it runs.
public struct UserEntry {
    /// The user id's UTF-8 bytes.
    public let userId: UnsafeRawBufferPointer
    /// How many keys the user's state has.
    public let stateCount: Int
    /// The value of the state's first key, as the frame lists it; nil when the state is empty.
    public let firstValue: UnsafeRawBufferPointer?

    /// An entry that names only a user (a join, leave or timeout list, a publisher).
    init(userId: UnsafeRawBufferPointer) {
        self.userId = userId
        stateCount = 0
        firstValue = nil
    }

    init(userId: UnsafeRawBufferPointer, stateCount: Int, firstValue: UnsafeRawBufferPointer?) {
        self.userId = userId
        self.stateCount = stateCount
        self.firstValue = firstValue
    }
}

extension MessagePackCursor {
    /// Reads an array of user-state maps, handing each to `visit`; false on malformed input.
    mutating func userStates(_ visit: (UserEntry) -> Void) -> Bool {
        guard let count = arrayHeader() else { return false }
        for _ in 0..<count {
            var userId: UnsafeRawBufferPointer?
            var stateCount = 0
            var firstValue: UnsafeRawBufferPointer?
            let read = readMap { key, cursor in
                if key.equals("userId") { return cursor.string().map { userId = $0.raw } != nil }
                guard key.equals("states") else { return cursor.skip(depth: 0) }
                guard let keys = cursor.mapHeader() else { return false }
                stateCount = keys
                for index in 0..<keys {
                    guard cursor.string() != nil, let value = cursor.string() else { return false }
                    if index == 0 { firstValue = value.raw }
                }
                return true
            }
            guard read, let userId else { return false }
            visit(UserEntry(userId: userId, stateCount: stateCount, firstValue: firstValue))
        }
        return true
    }

    /// Reads an array of strings, handing each to `visit`; false on malformed input.
    mutating func userIds(_ visit: (UserEntry) -> Void) -> Bool {
        guard let count = arrayHeader() else { return false }
        for _ in 0..<count {
            guard let id = string() else { return false }
            visit(UserEntry(userId: id.raw))
        }
        return true
    }
}
