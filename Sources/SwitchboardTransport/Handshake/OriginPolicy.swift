/// The Origin allow-list of a server: which browser pages may open a WebSocket to it.
///
/// Browsers send `Origin` with every WebSocket handshake, so a list stops other sites' pages
/// from using a visitor's browser to connect (cross-site WebSocket hijacking). Clients that are
/// not browsers send no Origin (and could send any), so a request without one is allowed.
public enum OriginPolicy {
    /// Whether a request with `origin` (the header value, nil when absent) may connect when
    /// `allowed` (normalized, nil for any) is the list.
    public static func allows(_ origin: String?, allowed: Set<String>?) -> Bool {
        guard let allowed, let origin else { return true }
        return allowed.contains(normalize(origin))
    }

    /// The form origins are compared in: lowercased, without a trailing slash
    /// ("https://App.example/" and "https://app.example" are the same origin).
    public static func normalize(_ origin: String) -> String {
        var text = Substring(origin.lowercased())
        while text.hasSuffix("/") { text = text.dropLast() }
        return String(text)
    }

    /// Every origin of `origins` normalized.
    public static func normalized(_ origins: Set<String>) -> Set<String> {
        Set(origins.map(normalize))
    }
}
