/// A user id as the client gives it at login.
public typealias UserID = String

/// One logged-in session: it outlives a connection while it can still be resumed.
public struct SessionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The numeric value, unique for the life of a server.
    public let rawValue: UInt64
    /// Wraps a raw value.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (a: SessionID, b: SessionID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "session#\(rawValue)" }
}

/// One transport connection (one WebSocket).
public struct ConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The numeric value, unique for the life of a server.
    public let rawValue: UInt64
    /// Wraps a raw value.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (a: ConnectionID, b: ConnectionID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "connection#\(rawValue)" }
}

/// A channel is named within its type: a message channel and a stream channel may share a name.
public struct ChannelKey: Hashable, Sendable, CustomStringConvertible {
    /// The channel type.
    public let type: RtmChannelType
    /// The channel name (for a user channel: the receiving user id).
    public let name: String
    /// Creates a key.
    public init(_ type: RtmChannelType, _ name: String) {
        self.type = type
        self.name = name
    }
    public var description: String { "\(type):\(name)" }
}

/// A message body exactly as it was sent: a string stays a string, bytes stay bytes.
public enum MessagePayload: Hashable, Sendable {
    /// A string message.
    case string(String)
    /// A binary message.
    case binary([UInt8])

    /// Size in bytes as counted against the payload limit.
    public var byteCount: Int {
        switch self {
        case .string(let text): text.utf8.count
        case .binary(let bytes): bytes.count
        }
    }
}
