/// Why a connection was refused or closed by policy, as a metric label: the free-text reasons of
/// the transport and the server sorted into a fixed set, so the series stay few.
enum RefusalReason: String, Sendable, CaseIterable {
    case addressCap = "address_cap"
    case handshakeTimeout = "handshake_timeout"
    case handshakeRefused = "handshake_refused"
    case frameRate = "frame_rate"
    case slowConsumer = "slow_consumer"
    case loginTimeout = "login_timeout"
    case requestsWaiting = "requests_waiting"
    case apiKeyMissing = "api_key_missing"
    case apiKeyWrong = "api_key_wrong"
    case other

    /// The label of a reason as the transport or server words it.
    init(describing reason: String) {
        let prefixes: [(String, RefusalReason)] = [
            ("too many connections", .addressCap), ("handshake timeout", .handshakeTimeout),
            ("handshake refused", .handshakeRefused), ("too many frames", .frameRate),
            ("slow consumer", .slowConsumer), ("no login within", .loginTimeout),
            ("api: no API key", .apiKeyMissing), ("api: wrong API key", .apiKeyWrong),
        ]
        if let match = prefixes.first(where: { reason.hasPrefix($0.0) }) {
            self = match.1
        } else if reason.hasSuffix("bytes of requests waiting") {
            self = .requestsWaiting
        } else {
            self = .other
        }
    }
}
