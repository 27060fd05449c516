import Foundation
import Testing
import SwitchboardServer
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
        plan.apply(to: log) { _ in Issue.record("no call rate changed") }
        #expect(log.level == .debug && log.format == .json)
        #expect(ReloadPlan(from: after, to: after).lines == ["reload: no setting changed"])
    }
}
