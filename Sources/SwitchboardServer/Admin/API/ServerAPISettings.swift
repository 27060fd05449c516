/// The server API (`POST /api/<method>` on the admin listener): which keys open it and how fast
/// each may call.
public struct ServerAPISettings: Sendable, Equatable {
    /// Where the keys come from.
    public var keys: APIKeySource
    /// Calls per second one key may make (a batch counts each of its calls), with a burst of as
    /// many; past it a call is 429. nil for no cap.
    public var callsPerSecondPerKey: Int?

    /// The API opened by `keys`, each key allowed `callsPerSecondPerKey` calls a second.
    public init(keys: APIKeySource, callsPerSecondPerKey: Int? = 1_000) {
        self.keys = keys
        self.callsPerSecondPerKey = callsPerSecondPerKey
    }
}

/// Where the server API's keys come from.
public enum APIKeySource: Sendable, Equatable {
    /// A file of keys, one a line (blank lines and lines starting with `#` are skipped), read at
    /// start and again by `SwitchboardServer.reloadAPIKeys()` (`switchboard serve` on SIGHUP).
    case file(String)
    /// Keys given by the embedding program.
    case keys([String])
}
