/// A parsed `ws://host[:port][/path][?query]` or `wss://…` URL.
public struct WebSocketURL: Sendable, Equatable {
    /// True for `wss://` (WebSocket over TLS).
    public let secure: Bool
    /// Host name or address (IPv6 without brackets).
    public let host: String
    /// TCP port (80, or 443 for `wss://`, when the URL names none).
    public let port: Int
    /// Request target: path and query, at least "/".
    public let path: String

    /// Parses `string`; nil when it is not a `ws://` or `wss://` URL.
    public init?(_ string: String) {
        let scheme = string.prefix(6).lowercased()
        if scheme.hasPrefix("ws://") {
            secure = false
        } else if scheme == "wss://" {
            secure = true
        } else {
            return nil
        }
        let rest = string.dropFirst(secure ? 6 : 5)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let target = rest[authorityEnd...]
        path = target.isEmpty ? "/" : (target.first == "?" ? "/" + target : String(target))
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        var hostPart = authority[...]
        var portPart: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { return nil }
                portPart = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        }
        guard !hostPart.isEmpty else { return nil }
        host = String(hostPart)
        if let portPart {
            guard let value = Int(portPart), (1...65535).contains(value) else { return nil }
            port = value
        } else {
            port = secure ? 443 : 80
        }
    }

    /// The `Host` header value.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }
}
