/// A user id as the client gives it at login.
public typealias UserID = String

/// An app id: every table of every module is keyed by it, so two apps on one server never meet.
public typealias AppID = String

/// A user within its app: the same user id in two apps is two different users.
public struct UserKey: Hashable, Sendable, CustomStringConvertible {
    /// The app.
    public let app: AppID
    /// The user id.
    public let userId: UserID
    /// Creates a key.
    public init(_ app: AppID, _ userId: UserID) {
        self.app = app
        self.userId = userId
    }
    public var description: String { "\(userId)@\(app)" }

    /// Hashes the user id alone: a server nearly always serves one app, and a user-channel
    /// publish looks its receiver up by this key, so hashing the app's name too would double the
    /// work for nothing. Equal ids of two apps share a hash, never an entry (`==` compares both).
    public func hash(into hasher: inout Hasher) { hasher.combine(userId) }
}

/// Who makes an authenticated request: the app, the user and the session it comes from.
public struct Caller: Hashable, Sendable, CustomStringConvertible {
    /// The app the session logged in to.
    public let app: AppID
    /// The logged-in user.
    public let userId: UserID
    /// The session the request came on.
    public let session: SessionID
    /// Creates a caller.
    public init(app: AppID, userId: UserID, session: SessionID) {
        self.app = app
        self.userId = userId
        self.session = session
    }
    /// The caller's user within its app.
    public var user: UserKey { UserKey(app, userId) }
    /// A channel of the caller's app.
    public func channel(_ type: RtmChannelType, _ name: String) -> ChannelKey { ChannelKey(app: app, type, name) }
    public var description: String { "\(userId)@\(app) \(session)" }
}

/// One logged-in session: it outlives a connection while it can still be resumed.
public struct SessionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The numeric value, unique for the life of a server.
    public let rawValue: UInt64
    /// Wraps a raw value.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (a: SessionID, b: SessionID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "session#\(rawValue)" }
    /// Hashes the raw value.
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
    /// The raw value's one-shot hash, which `Dictionary` and `Set` ask for on every lookup (a
    /// session is looked up for every push it receives): it needs no `Hasher` of its own.
    public func _rawHashValue(seed: Int) -> Int { rawValue._rawHashValue(seed: seed) }
}

/// A channel is named within its app and its type: a message channel and a stream channel may
/// share a name, and so may the channels of two apps.
public struct ChannelKey: Hashable, Sendable, CustomStringConvertible {
    /// The app the channel belongs to.
    public let app: AppID
    /// The channel type.
    public let type: RtmChannelType
    /// The channel name (for a user channel: the receiving user id).
    public let name: String
    /// Creates a key.
    public init(app: AppID, _ type: RtmChannelType, _ name: String) {
        self.app = app
        self.type = type
        self.name = name
    }
    /// Creates the key of `address` in `app`.
    public init(app: AppID, _ address: ChannelAddress) {
        self.init(app: app, address.type, address.name)
    }
    /// The channel as a client of the app names it.
    public var address: ChannelAddress { ChannelAddress(type, name) }
    public var description: String { "\(type):\(name)@\(app)" }
}

/// A channel as a client names it: its type and name, within the app the client logged in to.
public struct ChannelAddress: Hashable, Sendable, CustomStringConvertible {
    /// The channel type.
    public let type: RtmChannelType
    /// The channel name.
    public let name: String
    /// Creates an address.
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
