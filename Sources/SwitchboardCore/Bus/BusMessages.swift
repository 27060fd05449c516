/// A fact that already happened, published once and delivered in order to every subscriber of its type.
public protocol BusEvent: Sendable {}

/// A command with exactly one handler and a typed response.
public protocol BusRequest: Sendable {
    /// What the handler answers.
    associatedtype Response: Sendable
    /// The operation's name, used in errors: its feature's `OperationName` table's
    /// (`OperationName.Messages.publish.rawValue` …), or an extension's own.
    static var operation: String { get }
}

/// The empty response of a request that only succeeds or fails.
public struct Done: Sendable, Hashable {
    /// The one value.
    public init() {}
}
