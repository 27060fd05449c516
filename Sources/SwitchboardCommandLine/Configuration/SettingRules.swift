/// The rules between settings (a key that needs another), checked on a file alone
/// (`config check`) and on the effective configuration (`serve`, `config show`).
enum SettingRules {
    /// A broken rule: the setting it is about, and why.
    struct Broken: Equatable {
        let name: String
        let message: String
    }

    /// The rules `value` (a setting's value by option name, nil when not set) breaks, naming
    /// settings with `named` (a file's keys, or options); `appsWithWebhooks` are the apps that
    /// give receivers of their own (`apps.<id>.webhookUrls`).
    static func broken(_ value: (String) -> SettingValue?, named: (String) -> String, appsWithWebhooks: [String] = []) -> [Broken] {
        var broken: [Broken] = []
        func n(_ name: String) -> String { named(name) }
        let certificate = value("tls-cert"), key = value("tls-key")
        if (certificate == nil) != (key == nil) {
            broken.append(Broken(name: certificate == nil ? "tls-key" : "tls-cert", message: "\(n("tls-cert")) and \(n("tls-key")) go together"))
        }
        if value("admin-tls") == .flag(true) && certificate == nil {
            broken.append(Broken(name: "admin-tls", message: "\(n("admin-tls")) needs \(n("tls-cert")) and \(n("tls-key"))"))
        }
        if value("api-key-file") != nil && value("admin-listen") == .text("off") {
            broken.append(Broken(name: "api-key-file", message: "\(n("api-key-file")) needs the admin listener (\(n("admin-listen")) is off)"))
        }
        if case .text(let node)? = value("node-id") {
            if value("cluster") == nil { broken.append(Broken(name: "node-id", message: "\(n("node-id")) needs \(n("cluster"))")) }
            if node.utf8.count > 64 { broken.append(Broken(name: "node-id", message: "takes a name of 1 to 64 bytes")) }
        }
        if value("webhook-url") != nil && value("webhook-secret-file") == nil {
            broken.append(Broken(name: "webhook-url", message: "\(n("webhook-url")) needs \(n("webhook-secret-file")): every delivery is signed"))
        }
        if let app = appsWithWebhooks.first, value("webhook-url") == nil && value("webhook-secret-file") == nil {
            broken.append(Broken(name: "webhook-secret-file", message: "apps.\(app).webhookUrls needs \(n("webhook-secret-file")): every delivery is signed"))
        }
        if value("webhook-secret-file") != nil && value("webhook-url") == nil && appsWithWebhooks.isEmpty {
            broken.append(Broken(name: "webhook-secret-file", message: "\(n("webhook-secret-file")) needs \(n("webhook-url")) or an app's webhookUrls"))
        }
        return broken
    }

    /// The rules a file breaks on its own, as problems at the keys concerned.
    static func problems(in file: ConfigFile) -> [ConfigProblem] {
        let appsWithWebhooks = file.apps.filter { $0.settings[AppSettings.webhookURLs]?.value.givesItems ?? false }.map(\.id)
        return broken(
            { name in
                guard let setting = ServeSettings.named(name) else { return nil }
                return file[setting.key] ?? setting.defaultValue
            },
            named: { name in "\"\(ServeSettings.named(name)?.key ?? name)\"" },
            appsWithWebhooks: appsWithWebhooks
        ).map { rule in
            // The message names the keys.
            let key = ServeSettings.named(rule.name)?.key ?? rule.name
            return ConfigProblem(path: file.path, line: file.values[key]?.line, key: "", message: rule.message)
        }
    }
}
