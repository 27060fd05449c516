import SwitchboardCore

/// The opaque `page` / `nextPage` strings of `whoNow`: a place in a channel's roster.
enum PageToken {
    /// The token for the page after roster position `cursor`; empty when there is none.
    static func encode(_ cursor: UInt64?) -> String {
        cursor.map { "p" + String($0, radix: 36) } ?? ""
    }

    /// The roster position a token names (0 for the first page); throws `presenceInvalidArgument`
    /// for a string no answer gave.
    static func decode(_ token: String) throws(RtmError) -> UInt64 {
        guard !token.isEmpty else { return 0 }
        guard token.first == "p", token.count <= 14, let cursor = UInt64(token.dropFirst(), radix: 36), cursor > 0 else {
            throw RtmError(.presenceInvalidArgument, operation: WhoNow.operation, reason: "page \(token.debugDescription) is not a page this server gave")
        }
        return cursor
    }
}
