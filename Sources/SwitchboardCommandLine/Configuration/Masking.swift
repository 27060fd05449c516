import SwitchboardRedis

/// How secrets are shown: never whole.
enum Masking {
    /// `value` as `config show` and the reload log show it: secrets masked, unset as `(not set)`.
    static func shown(_ value: SettingValue?, of kind: SettingKind, secret: Bool) -> String {
        guard let value else { return "(not set)" }
        guard secret, case .text(let text) = value else { return value.description }
        // A Redis URL writes itself with its password hidden.
        if case .redisURL = kind, let url = RedisURL(text) { return url.description }
        return text.count >= 12 ? "****" + text.suffix(4) : "****"
    }
}
