/// A WebSocket close status code (RFC 6455 section 7.4).
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The numeric code as sent on the wire.
    public let rawValue: UInt16

    /// Wraps a numeric close code.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection was fulfilled.
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// 1001: the endpoint is going away (server shutdown, page navigation).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// 1002: the peer violated the protocol.
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// 1003: the peer sent a kind of data the endpoint cannot accept.
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// 1005: reserved; a close frame arrived without a code. Never sent.
    public static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// 1006: reserved; the connection dropped without a close frame. Never sent.
    public static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    /// 1007: a message's data was inconsistent with its type (invalid UTF-8 in text).
    public static let invalidPayload = WebSocketCloseCode(rawValue: 1007)
    /// 1008: a message violated the endpoint's policy.
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// 1009: a message was too big to process.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// 1010: the client expected an extension the server did not negotiate.
    public static let mandatoryExtension = WebSocketCloseCode(rawValue: 1010)
    /// 1011: the server hit an unexpected condition.
    public static let internalError = WebSocketCloseCode(rawValue: 1011)

    /// True when the code may appear in a close frame on the wire.
    public var isSendable: Bool {
        switch rawValue {
        case 1000...1003, 1007...1011, 3000...4999: return true
        default: return false
        }
    }

    /// The code in decimal.
    public var description: String { String(rawValue) }
}
