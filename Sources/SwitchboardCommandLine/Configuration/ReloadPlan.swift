import SwitchboardCore
import SwitchboardServer

/// What a SIGHUP changes: the settings that take effect at once (the log's level and format, the
/// limits, the apps served with their certificates and limits, the webhook receivers and secret
/// while webhooks run), and those that changed but take a restart. The running configuration
/// keeps its values for the latter, so a later SIGHUP names them again until the restart.
struct ReloadPlan: Equatable {
    /// A setting applied now.
    struct Change: Equatable {
        let name: String
        let old: String
        let new: String
    }

    /// Applied now (`Reload.live`).
    let applied: [Change]
    /// Changed in the layers but in force only after a restart.
    let needRestart: [String]
    /// The configuration in force after the reload.
    let running: EffectiveConfiguration

    /// The plan from `current` to `reread`; `webhooksRunning`: whether the server runs the
    /// webhooks module (then their receivers and secret change live); `certificatesLive`: whether
    /// the server checks tokens with certificates it can be given (then apps with certificates
    /// can come and go, and certificates change, live).
    init(
        from current: EffectiveConfiguration, to reread: EffectiveConfiguration, webhooksRunning: Bool = false,
        certificatesLive: Bool = false
    ) {
        var applied: [Change] = []
        var needRestart: [String] = []
        var entries: [EffectiveConfiguration.Entry] = []
        func isLive(_ reload: Reload) -> Bool { reload == .live || (reload == .liveWithWebhooks && webhooksRunning) }
        for (old, new) in zip(current.entries, reread.entries) {
            guard old.value != new.value, let setting = ServeSettings.named(old.name) else {
                entries.append(new.value == old.value ? new : old)
                continue
            }
            if isLive(setting.reload) {
                applied.append(Change(name: old.name, old: Masking.shown(old.value, of: setting.kind, secret: setting.secret), new: Masking.shown(new.value, of: setting.kind, secret: setting.secret)))
                entries.append(new)
            } else {
                needRestart.append(old.name)
                entries.append(old)
            }
        }
        var apps: [EffectiveConfiguration.App] = []
        for new in reread.apps {
            let changes = AppChanges(
                from: current.apps.first { $0.id == new.id }, to: new, webhooksRunning: webhooksRunning,
                certificatesLive: certificatesLive)
            applied += changes.applied
            needRestart += changes.needRestart
            if let app = changes.running { apps.append(app) }
        }
        for old in current.apps where !reread.apps.contains(where: { $0.id == old.id }) {
            applied.append(Change(name: "apps.\(old.id)", old: "served", new: "not served (new logins refused)"))
        }
        var limits: [EffectiveConfiguration.Entry] = []
        for (old, new) in zip(current.limits, reread.limits) {
            guard old.value != new.value, let setting = LimitSettings.keyed(old.name) else {
                limits.append(new.value == old.value ? new : old)
                continue
            }
            if setting.reload == .live {
                applied.append(Change(name: old.name, old: old.value?.description ?? "-", new: new.value?.description ?? "-"))
                limits.append(new)
            } else {
                needRestart.append(old.name)
                limits.append(old)
            }
        }
        self.applied = applied
        self.needRestart = needRestart
        running = EffectiveConfiguration(entries: entries, apps: apps, limits: limits)
    }

    /// Applies the live changes: to the server's log, and the limits and apps served to `limits`
    /// (the whole edition of `running`, for every request from now on).
    func apply(to log: ServerLog, limits: LimitsBook) {
        for change in applied {
            switch change.name {
            case "log-level": if let level = ServerLog.Level(name: change.new) { log.setLevel(level) }
            case "log-format": if let format = LogFormat(name: change.new) { log.setFormat(format) }
            default: break
            }
        }
        limits.replace(with: ServeStart.limitsEdition(of: running))
    }

    /// Whether `name` is a setting of the webhooks' receivers or their secret.
    static func isWebhookReceivers(_ name: String) -> Bool {
        name == "webhook-url" || name == "webhook-secret-file" || (name.hasPrefix("apps.") && name.hasSuffix("." + AppSettings.webhookURLs))
    }

    /// The log lines that say what changed and what waits for a restart.
    var lines: [String] {
        var lines = applied.map { "reload: \($0.name) \($0.old) → \($0.new)" }
        if !needRestart.isEmpty {
            lines.append("reload: changed but applied only at the next start: \(needRestart.joined(separator: ", "))")
        }
        if needRestart.contains(where: Self.isWebhookReceivers) {
            lines.append("reload: the webhooks do not run (the server started without a receiver): their receivers take a restart")
        }
        if needRestart.contains(where: AppChanges.isCertificate) {
            lines.append(
                "reload: the server started without app certificates (any token is let in): an app with a certificate takes a restart, and is not served until then")
        }
        if lines.isEmpty { lines.append("reload: no setting changed") }
        return lines
    }
}

/// What a reload does with one app of the file: a new one is served from now on (unless its
/// certificate cannot be put in force), an app's certificate, own limits and receivers change.
struct AppChanges {
    /// Applied now.
    var applied: [ReloadPlan.Change] = []
    /// Changed but in force only after a restart.
    var needRestart: [String] = []
    /// The app as it runs after the reload; nil when it is not served until a restart.
    var running: EffectiveConfiguration.App?

    static let certificate = "certificate"

    /// The changes from `old` (nil: the app is new) to `new`.
    init(from old: EffectiveConfiguration.App?, to new: EffectiveConfiguration.App, webhooksRunning: Bool, certificatesLive: Bool) {
        let name = "apps.\(new.id)"
        var app = new
        guard let old else {
            if new.settings[Self.certificate] != nil && !certificatesLive {
                needRestart.append("\(name).\(Self.certificate)")
                return
            }
            if !webhooksRunning, new.settings[AppSettings.webhookURLs] != nil {
                needRestart.append("\(name).\(AppSettings.webhookURLs)")
                app.settings[AppSettings.webhookURLs] = nil
            }
            applied.append(ReloadPlan.Change(name: name, old: "not served", new: "served"))
            running = app
            return
        }
        for setting in AppSettings.all {
            let before = old.settings[setting.key], after = new.settings[setting.key]
            guard before?.value != after?.value else { continue }
            let live = setting.key == Self.certificate ? certificatesLive : webhooksRunning
            if live {
                // An app's setting it does not give shows as "-".
                func shown(_ entry: EffectiveConfiguration.Entry?) -> String {
                    entry?.value.map { Masking.shown($0, of: setting.kind, secret: setting.secret) } ?? "-"
                }
                applied.append(ReloadPlan.Change(name: "\(name).\(setting.key)", old: shown(before), new: shown(after)))
            } else {
                needRestart.append("\(name).\(setting.key)")
                app.settings[setting.key] = before
            }
        }
        for setting in LimitSettings.perApp {
            let before = old.limits.first { $0.name == setting.key }?.value
            let after = new.limits.first { $0.name == setting.key }?.value
            guard before != after else { continue }
            applied.append(
                ReloadPlan.Change(
                    name: "\(name).\(setting.key)", old: before?.description ?? "(the server's)",
                    new: after?.description ?? "(the server's)"))
        }
        running = app
    }

    /// Whether `name` (a plan's) is an app's certificate.
    static func isCertificate(_ name: String) -> Bool {
        name.hasPrefix("apps.") && name.hasSuffix(".\(certificate)")
    }
}
