import SwitchboardCore
import SwitchboardServer

/// What a SIGHUP changes: the settings that take effect at once (the log's level and format, the
/// per-client call rates, the webhook receivers and secret while webhooks run), and those that
/// changed but take a restart. The running configuration keeps its values for the latter, so a later SIGHUP names
/// them again until the restart.
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
    /// webhooks module (then their receivers and secret change live).
    init(from current: EffectiveConfiguration, to reread: EffectiveConfiguration, webhooksRunning: Bool = false) {
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
        // The apps' own receivers change live with the others; any other change of the apps waits.
        let webhookKey = AppSettings.webhookURLs
        func withoutReceivers(_ apps: [EffectiveConfiguration.App]) -> [EffectiveConfiguration.App] {
            apps.map { app in
                var app = app
                app.settings[webhookKey] = nil
                return app
            }
        }
        if withoutReceivers(current.apps) != withoutReceivers(reread.apps) { needRestart.append("apps") }
        var apps = current.apps
        for index in apps.indices {
            let old = apps[index].settings[webhookKey]
            let new = reread.apps.first { $0.id == apps[index].id }?.settings[webhookKey]
            guard old?.value != new?.value else {
                apps[index].settings[webhookKey] = new
                continue
            }
            let name = "apps.\(apps[index].id).\(webhookKey)"
            if webhooksRunning {
                applied.append(Change(name: name, old: old?.value?.description ?? "-", new: new?.value?.description ?? "-"))
                apps[index].settings[webhookKey] = new
            } else {
                needRestart.append(name)
            }
        }
        var limits: [EffectiveConfiguration.Entry] = []
        for (old, new) in zip(current.limits, reread.limits) {
            guard old.value != new.value, let setting = LimitSettings.all.first(where: { $0.key == old.name }) else {
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

    /// Applies the live changes: to the server's log, and the call rates (when one changed) to
    /// `updateCallRates`.
    func apply(to log: ServerLog, updateCallRates: (Limits) -> Void) {
        for change in applied {
            switch change.name {
            case "log-level": if let level = ServerLog.Level(name: change.new) { log.setLevel(level) }
            case "log-format": if let format = LogFormat(name: change.new) { log.setFormat(format) }
            default: break
            }
        }
        if applied.contains(where: { $0.name.hasPrefix("limits.") }) { updateCallRates(ServeStart.limits(of: running)) }
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
        if lines.isEmpty { lines.append("reload: no setting changed") }
        return lines
    }
}
