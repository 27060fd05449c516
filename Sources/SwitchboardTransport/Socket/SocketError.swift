import Glibc

/// A failed system call on a socket or event loop descriptor.
public struct SocketError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The call that failed.
    public let operation: String
    /// The `errno` it left.
    public let code: Int32

    /// Captures the current `errno` for `operation`.
    init(_ operation: String, code: Int32 = errno) {
        self.operation = operation
        self.code = code
    }

    /// The call and the system's message for the error.
    public var description: String { "\(operation): \(String(cString: strerror(code)))" }
}
