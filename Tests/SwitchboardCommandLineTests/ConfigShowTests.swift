import Foundation
import Testing
import SwitchboardServer
import SwitchboardCore
@testable import SwitchboardCommandLine

/// `config show` and what a SIGHUP changes.
@Suite(.timeLimit(.minutes(1))) struct ConfigShowTests {
    @Test func showNamesEachValuesSourceAndMasksSecrets() throws {
        let path = try ConfigFileTests.write("""
            {
              "logLevel": "warning",
              "cluster": "redis://ops:hunter2@10.0.0.9:6379",
              "apps": {"demo": {"certificate": "5CFd2fd1755d40ecb72977518be15d3b"}}
            }
            """)
        defer { ConfigFileTests.remove(path) }
        let shown = try ConfigCommand.run(
            ["show", "--config", path, "--listen", "0.0.0.0:9200"], environment: ["SWITCHBOARD_LOG_FORMAT": "json"])
        let rows = Dictionary(uniqueKeysWithValues: shown.split(separator: "\n").dropFirst().map { line -> (String, String) in
            let key = String(line.prefix { $0 != " " })
            return (key, line.dropFirst(key.count).trimmingCharacters(in: .whitespaces))
        })
        #expect(rows["listen"]?.hasSuffix("flag --listen") == true)
        #expect(rows["listen"]?.hasPrefix("0.0.0.0:9200") == true)
        #expect(rows["logFormat"]?.hasSuffix("environment SWITCHBOARD_LOG_FORMAT") == true)
        #expect(rows["logLevel"]?.hasSuffix("file \(path):2") == true)
        #expect(rows["dataDir"]?.hasSuffix("default") == true)
        #expect(rows["cluster"]?.hasPrefix("redis://ops:***@10.0.0.9:6379") == true)
        #expect(rows["apps.demo.certificate"]?.hasPrefix("****5d3b") == true)
        #expect(rows["apps.demo.certificate"]?.hasSuffix("file \(path):4") == true)
        #expect(!shown.contains("hunter2") && !shown.contains("5CFd2fd1755d40ecb72977518be15d3b"))
        // Every setting has its row.
        for setting in ServeSettings.all { #expect(rows[setting.key] != nil, "\(setting.key)") }
    }

    @Test func aReloadAppliesTheLiveSettingsAndNamesTheOthers() throws {
        let before = try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: nil)
        let file = try SettingLayersTests.file([("logLevel", "debug"), ("logFormat", "json"), ("listen", "127.0.0.1:9999")])
        let after = try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: file)
        let plan = ReloadPlan(from: before, to: after)
        #expect(plan.applied == [.init(name: "log-level", old: "info", new: "debug"), .init(name: "log-format", old: "text", new: "json")])
        #expect(plan.needRestart == ["listen"])
        #expect(plan.lines == [
            "reload: log-level info → debug", "reload: log-format text → json",
            "reload: changed but applied only at the next start: listen",
        ])
        // The running configuration keeps the old listen, so the next reload names it again.
        #expect(plan.running["listen"] == .text("127.0.0.1:9100"))
        #expect(ReloadPlan(from: plan.running, to: after).needRestart == ["listen"])
        let log = ServerLog(level: .info) { _ in }
        let book = LimitsBook()
        plan.apply(to: log, limits: book)
        #expect(log.level == .debug && log.format == .json)
        #expect(book.edition == LimitsBook.Edition(), "no limit changed")
        #expect(ReloadPlan(from: after, to: after).lines == ["reload: no setting changed"])
    }

    @Test func showListsAnAppsOwnReceivers() throws {
        let path = try ConfigFileTests.write("""
            {
              "webhookSecretFile": "/srv/s",
              "apps": {"demo": {"webhookUrls": ["https://demo.example/h"]}, "other": {}}
            }
            """)
        defer { ConfigFileTests.remove(path) }
        let shown = try ConfigCommand.run(["show", "--config", path], environment: [:])
        let row = shown.split(separator: "\n").first { $0.hasPrefix("apps.demo.webhookUrls ") }
        #expect(row?.contains("https://demo.example/h") == true && row?.hasSuffix("file \(path):3") == true, "\(shown)")
        #expect(shown.split(separator: "\n").contains { $0.hasPrefix("apps.other.webhookUrls ") && $0.hasSuffix(" -") })
    }

    @Test func aReloadChangesTheWebhookReceiversOnlyWhileTheWebhooksRun() throws {
        func configuration(_ everyApp: String, _ demo: String, secret: String, certificate: String? = nil) throws -> EffectiveConfiguration {
            var demoSettings: [(String, JSONValue)] = [("webhookUrls", .array([.string(demo)]))]
            if let certificate { demoSettings.append(("certificate", .string(certificate))) }
            let file = try SettingLayersTests.file([
                ("webhookUrls", .array([.string(everyApp)])), ("webhookSecretFile", .string(secret)),
                ("apps", .object([("demo", .object(demoSettings))])),
            ])
            return try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: file)
        }
        let before = try configuration("http://a/", "http://demo-a/", secret: "/srv/s1")
        let after = try configuration("http://b/", "http://demo-b/", secret: "/srv/s2", certificate: "5CFd2fd1755d40ecb72977518be15d3b")

        let running = ReloadPlan(from: before, to: after, webhooksRunning: true)
        #expect(running.applied == [
            .init(name: "webhook-url", old: "http://a/", new: "http://b/"),
            .init(name: "webhook-secret-file", old: "/srv/s1", new: "/srv/s2"),
            .init(name: "apps.demo.webhookUrls", old: "http://demo-a/", new: "http://demo-b/"),
        ])
        #expect(running.needRestart == ["apps.demo.certificate"], "the certificate takes a restart: the server checks no tokens")
        #expect(WebhookReceivers(running.running) == WebhookReceivers(after))
        #expect(running.running.apps.first?.settings["certificate"] == nil)
        #expect(running.lines.contains("reload: apps.demo.webhookUrls http://demo-a/ → http://demo-b/"))

        // A server that started without webhooks has no module to give them to: a restart, named
        // again at each SIGHUP.
        let stopped = ReloadPlan(from: before, to: after, webhooksRunning: false)
        #expect(stopped.applied.isEmpty)
        #expect(stopped.needRestart == ["webhook-url", "webhook-secret-file", "apps.demo.certificate", "apps.demo.webhookUrls"])
        #expect(stopped.lines.contains("reload: the webhooks do not run (the server started without a receiver): their receivers take a restart"))
        #expect(WebhookReceivers(stopped.running) == WebhookReceivers(before))
        #expect(ReloadPlan(from: stopped.running, to: after, webhooksRunning: false).needRestart == stopped.needRestart)
    }
}
