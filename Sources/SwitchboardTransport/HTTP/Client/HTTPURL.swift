/// An `http://` or `https://` URL as a client needs it: scheme, host, port and the request target.
public struct HTTPURL: Sendable, Hashable, CustomStringConvertible {
    /// Whether it is `https://`.
    public let secure: Bool
    /// The host: a name, an IPv4 address, or an IPv6 address without its brackets.
    public let host: String
    /// The port: given, or 80 / 443.
    public let port: Int
    /// The path and query, at least "/".
    public let target: String

    /// Reads `text`; nil when it is not an absolute http(s) URL with a host (user info and
    /// fragments are refused).
    public init?(_ text: String) {
        let rest: Substring
        if text.hasPrefix("http://") {
            secure = false
            rest = text.dropFirst(7)
        } else if text.hasPrefix("https://") {
            secure = true
            rest = text.dropFirst(8)
        } else {
            return nil
        }
        guard !text.contains("#"), !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value >= 0x7f }) else { return nil }
        let slash = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<slash]
        let path = rest[slash...]
        target = path.isEmpty ? "/" : (path.hasPrefix("?") ? "/" + path : String(path))
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        var hostPart = authority
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard !hostPart.isEmpty else { return nil }
        host = String(hostPart)
        if let portText {
            guard let port = Int(portText), (1...65535).contains(port) else { return nil }
            self.port = port
        } else {
            port = secure ? 443 : 80
        }
    }

    /// The `Host` header's value.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }

    public var description: String { "\(secure ? "https" : "http")://\(hostHeader)\(target)" }
}
