/// Finds the end of an HTTP head (the blank line, CR LF CR LF) in bytes that grow between
/// calls, searching each byte about once.
struct HeadEnd: Sendable {
    /// Where the next search starts (what lies before held no blank line).
    private var searchFrom = 0

    /// The offset just past the blank line in `buffer`, if it holds one.
    mutating func find(in buffer: [UInt8]) -> Int? {
        let end = buffer.count
        var index = max(0, searchFrom - 3)
        while index + 3 < end {
            if buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
                return index + 4
            }
            index += 1
        }
        searchFrom = end
        return nil
    }

    /// Starts over, for bytes from which a head was removed.
    mutating func reset() { searchFrom = 0 }
}
