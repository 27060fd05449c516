import SwitchboardReference

/// Where a Redis server is and how to log in: `redis://[user:password@]host[:port][/db]`, or
/// `rediss://…` for TLS. The user and password may be percent-encoded; the port is 6379 unless
/// given; an IPv6 host is written in brackets.
public struct RedisURL: Sendable, Hashable, CustomStringConvertible {
    /// The host name or address (without brackets).
    public var host: String
    /// The TCP port.
    public var port: Int
    /// The ACL user; nil for the default user.
    public var username: String?
    /// The password; nil when the server asks for none.
    public var password: String?
    /// The database `SELECT`ed after connecting.
    public var database: Int
    /// True for `rediss://`: the connection runs TLS.
    public var secure: Bool

    /// The port Redis listens on unless told otherwise.
    public static let defaultPort = 6379

    /// A URL from its parts.
    public init(
        host: String, port: Int = defaultPort, username: String? = nil, password: String? = nil,
        database: Int = 0, secure: Bool = false
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.secure = secure
    }

    /// Parses `text`; nil when it is not a `redis://` or `rediss://` URL of the form above.
    public init?(_ text: String) {
        let lowered = text.lowercased()
        let rest: Substring
        if lowered.hasPrefix("redis://") {
            secure = false
            rest = text.dropFirst("redis://".count)
        } else if lowered.hasPrefix("rediss://") {
            secure = true
            rest = text.dropFirst("rediss://".count)
        } else {
            return nil
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash]
        let path = rest[slash...].dropFirst()
        guard !path.contains("?"), !path.contains("#"), !authority.contains("?"), !authority.contains("#") else { return nil }
        if path.isEmpty {
            database = 0
        } else {
            guard path.allSatisfy(\.isASCII), let number = Int(path), number >= 0 else { return nil }
            database = number
        }
        username = nil
        password = nil
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                guard let user = Self.percentDecoded(userInfo[..<colon]),
                    let secret = Self.percentDecoded(userInfo[userInfo.index(after: colon)...])
                else { return nil }
                username = user.isEmpty ? nil : user
                password = secret
            } else {
                guard let user = Self.percentDecoded(userInfo), !user.isEmpty else { return nil }
                username = user
            }
        }
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
        }
        guard !host.isEmpty, !host.contains("@") else { return nil }
        if let portText {
            guard portText.allSatisfy(\.isASCII), let number = Int(portText), (1...65535).contains(number) else { return nil }
            port = number
        } else {
            port = Self.defaultPort
        }
    }

    /// The URL written back, with the password hidden (for logs).
    public var description: String {
        var text = secure ? "rediss://" : "redis://"
        if username != nil || password != nil {
            text += username ?? ""
            if password != nil { text += ":***" }
            text += "@"
        }
        text += host.contains(":") ? "[\(host)]" : host
        text += ":\(port)"
        if database != 0 { text += "/\(database)" }
        return text
    }

    /// `text` with `%XX` escapes decoded; nil when an escape is malformed or the result is not
    /// UTF-8.
    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(Hex.value(of:)), let low = iterator.next().flatMap(Hex.value(of:)) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
