/// A violation of RFC 6455 by the peer, with the close code to answer it with.
public struct WebSocketProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The close code the connection must be closed with.
    public let code: WebSocketCloseCode
    /// A short human reason, sent as the close reason.
    public let reason: String

    /// Creates an error closing with `code`.
    public init(_ code: WebSocketCloseCode, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The code and reason.
    public var description: String { "\(code.rawValue) \(reason)" }
}
