/// Bytes that are not a RESP reply, or one larger than the reader's bounds allow. After it the
/// connection is unusable: the reader does not know where the next reply starts.
public struct RESPProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, and where.
    public let reason: String
    /// Creates the error.
    public init(_ reason: String) { self.reason = reason }
    public var description: String { "RESP protocol error: \(reason)" }
}
