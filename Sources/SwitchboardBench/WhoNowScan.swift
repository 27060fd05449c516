/// What a load generator needs from a `whoNow` answer, read in place: the request id, the
/// occupancy field, the users (handed to a visitor as raw bytes) and the next page's token.
public struct WhoNowScan: Sendable, Equatable {
    /// The request answered.
    public var id: UInt32 = 0
    /// `totalOccupancy`: the number of users listed, as the reference defines it.
    public var totalOccupancy = 0
    /// Users the page listed.
    public var users = 0
    /// The `page` to ask for next; empty at the end.
    public var nextPage = ""

    /// Scans one server frame: nil unless it is a well-formed `ok` answer with result `whoNow`.
    public static func scan(_ bytes: [UInt8], visit: (UserEntry) -> Void) -> WhoNowScan? {
        bytes.withUnsafeBytes { raw in scan(raw, visit: visit) }
    }

    private static func scan(_ bytes: UnsafeRawBufferPointer, visit: (UserEntry) -> Void) -> WhoNowScan? {
        var cursor = MessagePackCursor(bytes: bytes)
        var result = WhoNowScan()
        var isOk = false
        var isWhoNow = false
        let read = cursor.readMap { key, cursor in
            if key.equals("t") {
                isOk = cursor.expect("ok")
                return isOk
            }
            if key.equals("result") {
                isWhoNow = cursor.expect("whoNow")
                return isWhoNow
            }
            if key.equals("id") { return cursor.requestId().map { result.id = $0 } != nil }
            if key.equals("totalOccupancy") { return cursor.integer().map { result.totalOccupancy = Int($0) } != nil }
            if key.equals("nextPage") { return cursor.string().map { result.nextPage = String(decoding: $0.raw, as: UTF8.self) } != nil }
            if key.equals("users") {
                return cursor.userStates { entry in
                    result.users += 1
                    visit(entry)
                }
            }
            return cursor.skip(depth: 0)
        }
        return read && isOk && isWhoNow ? result : nil
    }
}
