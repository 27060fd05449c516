/// Every setting of `switchboard serve`, in the order `--help`, `config show` and
/// `config default` list them. Adding a setting is one entry here (its option, variable and file
/// key follow from its name) and one line where `ServeStart` applies it; a per-app setting is one
/// entry in `AppSettings.all`.
public enum ServeSettings {
    public static let all: [Setting] = [
        Setting("listen", .address, default: .text("127.0.0.1:9100"), "where clients connect"),
        Setting("data-dir", .text, "DIR", default: .text("./switchboard-data"), "persistent data (metadata in SQLite)"),
        Setting(
            "storage-key-file", .text, "FILE",
            "seal metadata values at rest with AES-256-GCM under the key in FILE\n(64 hex digits or 32 bytes); the same key is needed at every start"),
        Setting("tls-cert", .text, "FILE", "serve wss:// with this PEM certificate chain"),
        Setting("tls-key", .text, "FILE", "the certificate's PEM private key"),
        Setting(
            "admin-listen", .addressOrOff, default: .text("127.0.0.1:9101"),
            "the admin listener: /health/live, /health/ready, /metrics; off for none"),
        Setting("admin-tls", .flag, default: .flag(false), "serve the admin listener over HTTPS with tls-cert and tls-key"),
        Setting(
            "api-key-file", .text, "FILE",
            "open the server API (POST /api/<method> on the admin listener) to the keys\nin FILE, one a line; the file is read again on SIGHUP"),
        Setting(
            "shutdown-drain", .number(0...3600), "SECONDS", default: .number(0),
            "on SIGTERM, report not ready for SECONDS before closing connections"),
        Setting(
            "cluster", .redisURL, secret: true,
            "cluster mode: share this Redis (redis://[user:password@]HOST:PORT[/DB],\nrediss:// for TLS) with the other nodes; metadata lives there"),
        Setting(
            "node-id", .text, "NAME",
            "this node's name in the cluster, unique and the same across its restarts\n(default: the host's name and a random suffix)"),
        Setting(
            "log-level", .choice(["debug", "info", "warning", "error", "none"]), default: .text("info"), reload: .live,
            "how much to log; changes on SIGHUP"),
        Setting(
            "log-format", .choice(["text", "json"]), default: .text("text"), reload: .live,
            "text lines, or one JSON object a line (time, level, module, message, ids);\nchanges on SIGHUP"),
        Setting(
            "no-rate-limits", .flag, default: .flag(false),
            "lift the per-client rate limits and the frame cap, for load tests only"),
        Setting(
            "allowed-origin", .list, "ORIGIN", key: "allowedOrigins",
            "let web pages from ORIGIN (e.g. https://app.example) connect; repeatable;\nwhen given, other origins get HTTP 403, clients without an Origin header\nare still let in"),
        Setting(
            "max-connections-per-address", .number(0...10_000_000), default: .number(1000),
            "connections per client IP, loopback exempt; 0 for no cap"),
        Setting(
            "max-frames-per-second", .number(0...10_000_000), default: .number(200),
            "frames per second per connection before it is closed with 1008; 0 for no cap"),
        Setting(
            "login-timeout", .number(0...86_400), "SECONDS", default: .number(10),
            "close connections not logged in after SECONDS; 0 for never"),
        Setting(
            "webhook-url", .webhookReceivers, "URL", key: "webhookUrls", reload: .liveWithWebhooks,
            "post every event to URL (http:// or https://); APP=URL for one app's events\nonly; repeatable; changes on SIGHUP once webhooks run"),
        Setting(
            "webhook-secret-file", .text, "FILE", reload: .liveWithWebhooks,
            "the key in FILE signs each delivery (X-Switchboard-Signature); needed with\nwebhook-url; the file is read again on SIGHUP"),
        Setting(
            "webhook-retry-for", .number(1...604_800), "SECONDS", default: .number(3600),
            "retry a delivery this long after its event, then drop it"),
        Setting(
            "webhook-message-content", .choice(["payload", "size"]), default: .text("payload"),
            "what message.offline carries of the message: the payload, or only its size"),
    ]

    /// The setting named `name` (an option name).
    public static func named(_ name: String) -> Setting? { all.first { $0.name == name } }

    /// The options of `serve` besides its settings: the file itself, and the apps.
    static let otherOptions: [OptionSpec] = [
        OptionSpec("config", .value, "FILE", "read settings from this JSON file (SWITCHBOARD_CONFIG); flags and\nvariables win over it; see 'switchboard config default'"),
        OptionSpec(
            "app-id", .repeatable, "ID",
            "serve only this app id; repeatable (SWITCHBOARD_APP_ID, comma-separated;\nkey \"apps\": {\"ID\": {…}})"),
        OptionSpec(
            "app-certificate", .repeatable, "CERT",
            "require tokens signed with this certificate, paired with --app-id in order\n(SWITCHBOARD_APP_CERTIFICATE, comma-separated; key \"apps\": {\"ID\": {\"certificate\": …}})"),
    ]

    /// The option table of `serve` (and of `config show`, which takes the same options).
    static func table(command: String, footer: String) -> OptionTable {
        OptionTable(command: command, options: otherOptions + all.map(\.option), footer: footer)
    }
}

/// One setting of an app, under `apps.<id>` in the configuration file.
public struct AppSetting: Sendable {
    /// The key under the app (`"certificate"`).
    public let key: String
    public let kind: SettingKind
    public let secret: Bool
    public let help: String
}

/// Every per-app setting; besides them, an app's own limits under `limits`
/// (`LimitSettings.perApp`).
public enum AppSettings {
    /// The key of an app's own webhook receivers.
    static let webhookURLs = "webhookUrls"
    /// The key of an app's own limits: groups of limits, as the file's `limits`.
    static let limits = "limits"

    public static let all: [AppSetting] = [
        AppSetting(
            key: "certificate", kind: .text, secret: true,
            help: "the app certificate login tokens are signed with; without one, any token is let in"),
        AppSetting(
            key: webhookURLs, kind: .webhookURLs, secret: false,
            help: "receivers of this app's events only (http:// or https:// URLs), besides webhookUrls; needs webhookSecretFile; changes on SIGHUP"),
    ]
}
