import Foundation
import SwitchboardCluster
import SwitchboardCrypto
import SwitchboardRedis
import SwitchboardCore
import SwitchboardServer
import SwitchboardTransport
import SwitchboardWebhooks

/// What `serve` starts from an effective configuration: the server's configuration, the app
/// certificates and the at-rest key. Reading it loads the files it names (TLS, storage key), so
/// an unusable one stops the command before the server starts.
struct ServeStart {
    var configuration = ServerConfiguration()
    var credentials: [String: String] = [:]
    var storageKey: StorageKey?

    init(_ effective: EffectiveConfiguration) throws {
        func text(_ name: String) -> String? { if case .text(let text)? = effective[name] { text } else { nil } }
        func number(_ name: String) -> Int? { if case .number(let number)? = effective[name] { number } else { nil } }
        func flag(_ name: String) -> Bool { effective[name] == .flag(true) }

        if let listen = text("listen").flatMap(HostAndPort.init) { (configuration.host, configuration.port) = (listen.host, listen.port) }
        configuration.dataDirectory = text("data-dir") ?? configuration.dataDirectory
        if let certificate = text("tls-cert"), let key = text("tls-key") {
            _ = try TLSContext.server(certificateFile: certificate, privateKeyFile: key)
            configuration.tls = ServerTLS(certificatePath: certificate, keyPath: key)
        }
        configuration.log = ServerLog(
            level: text("log-level").flatMap(ServerLog.Level.init(name:)) ?? .info,
            format: text("log-format").flatMap(LogFormat.init(name:)) ?? .text)
        configuration.limits = Self.limits(of: effective)
        configuration.appLimits = Self.appLimits(of: effective)
        if flag("no-rate-limits") { configuration.maxFramesPerSecond = nil }
        if case .list(let origins)? = effective["allowed-origin"], !origins.isEmpty { configuration.allowedOrigins = Set(origins) }
        if let cap = number("max-connections-per-address") { configuration.maxConnectionsPerAddress = cap == 0 ? nil : cap }
        if let cap = number("max-frames-per-second"), !flag("no-rate-limits") { configuration.maxFramesPerSecond = cap == 0 ? nil : cap }
        if let seconds = number("login-timeout") { configuration.loginTimeout = seconds == 0 ? nil : .seconds(seconds) }
        if let admin = text("admin-listen"), let address = HostAndPort(admin) {
            configuration.adminListener = AdminListener(host: address.host, port: address.port, tls: flag("admin-tls"))
        }
        if let seconds = number("shutdown-drain") { configuration.shutdownDrain = .seconds(seconds) }
        if let keyFile = text("api-key-file") { configuration.serverAPI = ServerAPISettings(keys: .file(keyFile)) }
        if let cluster = text("cluster").flatMap(RedisURL.init) {
            configuration.cluster = ClusterConfiguration(url: cluster, nodeID: text("node-id"))
        }
        configuration.appIds = Self.appIds(of: effective)
        credentials = Self.credentials(of: effective)
        storageKey = try text("storage-key-file").map { try StorageKey(contentsOfFile: $0) }
        let receivers = WebhookReceivers(effective)
        if !receivers.isEmpty, let secretFile = text("webhook-secret-file") {
            var webhooks = WebhookConfiguration(
                targets: receivers.everyApp.map { WebhookTarget(url: $0) },
                appTargets: receivers.perApp.mapValues { $0.map { WebhookTarget(url: $0) } },
                secret: try Self.webhookSecret(secretFile))
            if let seconds = number("webhook-retry-for") { webhooks.retryWindow = .seconds(seconds) }
            if let content = text("webhook-message-content").flatMap(OfflineMessageContent.init(rawValue:)) {
                webhooks.messageContent = content
            }
            configuration.webhooks = webhooks
        }
    }

    /// The webhook secret in `path`: its bytes without a final line break; an empty or unreadable
    /// file stops the start.
    static func webhookSecret(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("webhook-secret-file \(path) cannot be read")
        }
        var bytes = [UInt8](data)
        while let last = bytes.last, last == 0x0A || last == 0x0D { bytes.removeLast() }
        guard !bytes.isEmpty else { throw ConfigurationError("webhook-secret-file \(path) is empty") }
        return bytes
    }

    /// The limits `effective` gives: the reference's, with the file's over them, the rates
    /// lifted by `no-rate-limits`.
    static func limits(of effective: EffectiveConfiguration) -> Limits {
        lifted(LimitSettings.applied(given(effective.limits), to: Limits()), effective)
    }

    /// The limits of each app that has its own: the server's (before `no-rate-limits`) with the
    /// app's over them, the rates lifted by `no-rate-limits`.
    static func appLimits(of effective: EffectiveConfiguration) -> [AppID: Limits] {
        let server = LimitSettings.applied(given(effective.limits), to: Limits())
        var apps: [AppID: Limits] = [:]
        for app in effective.apps where !app.limits.isEmpty {
            apps[app.id] = lifted(LimitSettings.applied(given(app.limits), to: server), effective)
        }
        return apps
    }

    /// The app ids served; nil serves any.
    static func appIds(of effective: EffectiveConfiguration) -> Set<AppID>? {
        effective.apps.isEmpty ? nil : Set(effective.apps.map(\.id))
    }

    /// The certificates of the apps that have one, by app id.
    static func credentials(of effective: EffectiveConfiguration) -> [String: String] {
        var credentials: [String: String] = [:]
        for app in effective.apps {
            if case .text(let certificate)? = app.settings["certificate"]?.value { credentials[app.id] = certificate }
        }
        return credentials
    }

    /// What the server's limits book holds for `effective`: the limits, each app's own, the apps served.
    static func limitsEdition(of effective: EffectiveConfiguration) -> LimitsBook.Edition {
        LimitsBook.Edition(server: limits(of: effective), apps: appLimits(of: effective), served: appIds(of: effective))
    }

    /// The values `entries` give (not their defaults), by key.
    private static func given(_ entries: [EffectiveConfiguration.Entry]) -> [String: Int] {
        var given: [String: Int] = [:]
        for entry in entries where entry.source != .defaultValue {
            if case .number(let value)? = entry.value { given[entry.name] = value }
        }
        return given
    }

    private static func lifted(_ limits: Limits, _ effective: EffectiveConfiguration) -> Limits {
        effective["no-rate-limits"] == .flag(true) ? limits.liftingRateLimits() : limits
    }
}

/// The webhook receivers a configuration names: `webhook-url`'s (`URL` for every app, `APP=URL`
/// for one) and each app's `webhookUrls`.
struct WebhookReceivers: Equatable {
    /// URLs that get every app's events.
    var everyApp: [String] = []
    /// URLs that get one app's events, by app id.
    var perApp: [String: [String]] = [:]

    init(_ effective: EffectiveConfiguration) {
        if case .list(let texts)? = effective["webhook-url"] {
            for receiver in texts.compactMap(WebhookReceiver.init) {
                if let app = receiver.app { perApp[app, default: []].append(receiver.url) } else { everyApp.append(receiver.url) }
            }
        }
        for app in effective.apps {
            if case .list(let urls)? = app.settings[AppSettings.webhookURLs]?.value, !urls.isEmpty {
                perApp[app.id, default: []].append(contentsOf: urls)
            }
        }
    }

    /// Whether it names no receiver.
    var isEmpty: Bool { everyApp.isEmpty && perApp.values.allSatisfy(\.isEmpty) }
}
