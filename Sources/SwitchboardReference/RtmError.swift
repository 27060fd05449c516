/// An error as the reference reports it: the code, the operation that failed and a human reason.
public struct RtmError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The reference's error code.
    public let code: RtmErrorCode
    /// The operation that failed (`"publish"`, `"login"` …).
    public let operation: String
    /// A human-readable reason.
    public let reason: String

    /// Creates an error for `operation` with `code` and `reason`.
    public init(_ code: RtmErrorCode, operation: String, reason: String) {
        self.code = code
        self.operation = operation
        self.reason = reason
    }

    public var description: String { "\(operation) failed: \(code) (\(code.rawValue)): \(reason)" }
}
