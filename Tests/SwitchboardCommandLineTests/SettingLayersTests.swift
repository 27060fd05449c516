import Foundation
import Testing
import SwitchboardServer
@testable import SwitchboardCommandLine

/// Every setting of `serve`, read from each layer, and the layers' order: flags, then the
/// environment, then the file, then the default. The table is `ServeSettings.all`: a setting added
/// there is tested here without a line more (unless it needs a companion, below).
@Suite(.timeLimit(.minutes(1))) struct SettingLayersTests {
    /// Three different values a setting takes: one for the file, one for the environment, one for
    /// the flag.
    static func samples(_ setting: Setting) -> [SettingValue] {
        switch setting.kind {
        case .text: ["/srv/a-\(setting.name)", "/srv/b-\(setting.name)", "/srv/c-\(setting.name)"].map { .text($0) }
        case .address, .addressOrOff: ["10.0.0.1:7001", "10.0.0.2:7002", "10.0.0.3:7003"].map { .text($0) }
        case .number(let range): [range.lowerBound + 1, range.lowerBound + 2, range.lowerBound + 3].map { .number($0) }
        case .flag: [.flag(true), .flag(true), .flag(true)]
        case .list: [.list(["https://a.example"]), .list(["https://b.example", "https://c.example"]), .list(["https://d.example"])]
        case .choice(let names): [names.last!, names.first!, names.last!].map { .text($0) }
        case .redisURL: ["redis://10.0.0.1:6379", "redis://10.0.0.2:6380", "rediss://10.0.0.3:6381/2"].map { .text($0) }
        case .webhookReceivers:
            [.list(["https://a.example/hooks"]), .list(["http://10.0.0.2:8080/h", "demo=https://c.example/h"]), .list(["demo=http://d.example/"])]
        case .webhookURLs: [.list(["https://a.example/hooks"]), .list(["http://10.0.0.2:8080/h"]), .list(["http://d.example/?a=b"])]
        }
    }

    /// Settings that need another one set (rules between settings), given in the file.
    static let companions: [String: [(String, JSONValue)]] = [
        "tls-cert": [("tlsKey", "/srv/key.pem")], "tls-key": [("tlsCert", "/srv/cert.pem")],
        "admin-tls": [("tlsCert", "/srv/cert.pem"), ("tlsKey", "/srv/key.pem")],
        "node-id": [("cluster", "redis://127.0.0.1:6379")],
        "webhook-url": [("webhookSecretFile", "/srv/webhook.secret")],
        "webhook-secret-file": [("webhookUrls", .array(["https://backend.example/hooks"]))],
    ]

    /// A file with `members` (each on a line of its own, so lines can be checked), which other
    /// layers may complete.
    static func file(_ members: [(String, JSONValue)]) throws -> ConfigFile {
        let text = "{\n" + members.map { "  \(JSONValue.string($0.0).text): \($0.1.text)" }.joined(separator: ",\n") + "\n}\n"
        let (file, problems) = ConfigFile.check(Array(text.utf8), path: "test.json", rules: false)
        #expect(problems.isEmpty, "\(problems)")
        return try #require(file)
    }

    /// The command-line words that give `value` to `setting`.
    static func flagWords(_ setting: Setting, _ value: SettingValue) -> [String] {
        switch value {
        case .flag: ["--\(setting.name)"]
        case .list(let items): items.flatMap { ["--\(setting.name)", $0] }
        default: ["--\(setting.name)", value.description]
        }
    }

    @Test(arguments: ServeSettings.all.map(\.name)) func eachLayerGivesTheSettingAndTheHigherOneWins(_ name: String) throws {
        let setting = try #require(ServeSettings.named(name))
        let values = Self.samples(setting)
        let companions = Self.companions[name] ?? []
        let fileOnly = try Self.file(companions + [(setting.key, values[0].json)])
        let environment = [setting.environment: values[1].description]
        let flags = try ServeCommand.table.parse(Self.flagWords(setting, values[2]))

        let fromDefault = try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: nil)
        #expect(fromDefault.entry(name) == .init(name: name, value: setting.defaultValue, source: .defaultValue))

        let fromFile = try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: fileOnly)
        // The file's line: the setting is its last member, after the brace and the companions.
        #expect(fromFile.entry(name) == .init(name: name, value: values[0], source: .file("test.json", line: 2 + companions.count)))

        let fromEnvironment = try EffectiveConfiguration.resolve(ParsedOptions(), environment: environment, file: fileOnly)
        #expect(fromEnvironment.entry(name) == .init(name: name, value: values[1], source: .environment(setting.environment)))

        let fromFlag = try EffectiveConfiguration.resolve(flags, environment: environment, file: fileOnly)
        #expect(fromFlag.entry(name) == .init(name: name, value: values[2], source: .flag(name)))
    }

    @Test(arguments: ServeSettings.all.map(\.name)) func aValueThatDoesNotFitIsRefusedNamingItsLayer(_ name: String) throws {
        let setting = try #require(ServeSettings.named(name))
        let wrong: (text: String, json: JSONValue)
        switch setting.kind {
        case .flag: wrong = ("maybe", "maybe")
        case .list, .webhookReceivers, .webhookURLs: wrong = ("", 7)
        case .number(let range): wrong = (String(range.upperBound + 1), .integer(Int64(range.upperBound + 1)))
        case .text: wrong = ("", 7)
        default: wrong = ("nowhere", "nowhere")
        }
        let (_, problems) = ConfigFile.check(Array("{\"\(setting.key)\": \(wrong.json.text)}".utf8), path: "bad.json")
        #expect(problems.map(\.key) == [setting.key], "\(problems)")
        #expect(problems.first?.line == 1)
        guard !setting.kind.isList, setting.kind.isFlag || !wrong.text.isEmpty else { return }
        let fromEnvironment = #expect(throws: ConfigurationError.self) {
            try EffectiveConfiguration.resolve(ParsedOptions(), environment: [setting.environment: wrong.text], file: nil)
        }
        #expect(fromEnvironment?.description.hasPrefix(setting.environment) == true)
        if !setting.kind.isFlag {
            let fromFlag = #expect(throws: UsageError.self) {
                try EffectiveConfiguration.resolve(try ServeCommand.table.parse(["--\(name)", wrong.text]), environment: [:], file: nil)
            }
            #expect(fromFlag?.description.hasPrefix("--\(name)") == true)
        }
    }

    @Test func appsComeFromTheHighestLayerThatNamesAnyAndCertificatesFallThrough() throws {
        let file = try Self.file([
            ("apps", .object([("a1", .object([("certificate", "file-cert-a1")])), ("a2", .object([]))]))
        ])
        let fromFile = try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: file)
        #expect(fromFile.apps.map(\.id) == ["a1", "a2"])
        #expect(fromFile.apps[0].settings["certificate"]?.value == .text("file-cert-a1"))
        #expect(fromFile.apps[0].settings["certificate"]?.source == .file("test.json", line: 2))

        let fromEnvironment = try EffectiveConfiguration.resolve(
            ParsedOptions(), environment: ["SWITCHBOARD_APP_ID": "a1,b2"], file: file)
        #expect(fromEnvironment.apps.map(\.id) == ["a1", "b2"])
        #expect(fromEnvironment.apps[0].source == .environment("SWITCHBOARD_APP_ID"))
        // a1 has no certificate in the environment: the file's stands.
        #expect(fromEnvironment.apps[0].settings["certificate"]?.value == .text("file-cert-a1"))
        #expect(fromEnvironment.apps[1].settings["certificate"] == nil)

        let flags = try ServeCommand.table.parse(["--app-id", "a1", "--app-certificate", "flag-cert-a1"])
        let fromFlags = try EffectiveConfiguration.resolve(flags, environment: ["SWITCHBOARD_APP_ID": "a1,b2"], file: file)
        #expect(fromFlags.apps.map(\.id) == ["a1"])
        #expect(fromFlags.apps[0].settings["certificate"]?.value == .text("flag-cert-a1"))
        #expect(fromFlags.apps[0].settings["certificate"]?.source == .flag("app-certificate"))

        let unpaired = try ServeCommand.table.parse(["--app-id", "a1", "--app-id", "a2", "--app-certificate", "c"])
        #expect(throws: UsageError("give one --app-certificate per --app-id")) {
            try EffectiveConfiguration.resolve(unpaired, environment: [:], file: nil)
        }
    }

    @Test func rulesBetweenSettingsHoldAcrossLayers() throws {
        let file = try Self.file([("tlsCert", "/srv/cert.pem")])
        let error = #expect(throws: ConfigurationError.self) { try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: file) }
        #expect(error?.description.contains("--tls-cert and --tls-key go together") == true)
        // The other half from the environment completes it.
        let both = try EffectiveConfiguration.resolve(ParsedOptions(), environment: ["SWITCHBOARD_TLS_KEY": "/srv/key.pem"], file: file)
        #expect(both["tls-key"] == .text("/srv/key.pem"))
    }

    /// What each setting does to the server's configuration (`ServeStart`).
    @Test func eachSettingReachesTheServersConfiguration() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-start-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("storage.key").path
        try String(repeating: "ab", count: 32).write(toFile: keyFile, atomically: true, encoding: .utf8)
        let secretFile = directory.appendingPathComponent("webhook.secret").path
        try "s3cret\n".write(toFile: secretFile, atomically: true, encoding: .utf8)
        let file = try Self.file([
            ("listen", "127.0.0.2:7100"), ("dataDir", .string(directory.path)), ("storageKeyFile", .string(keyFile)),
            ("adminListen", "127.0.0.3:7101"), ("apiKeyFile", "/srv/keys"), ("shutdownDrain", 4),
            ("cluster", "redis://u:pw@127.0.0.4:6390/1"), ("nodeId", "n7"), ("logLevel", "debug"), ("logFormat", "json"),
            ("allowedOrigins", .array(["https://a.example"])), ("maxConnectionsPerAddress", 0), ("maxFramesPerSecond", 50),
            ("loginTimeout", 0), ("apps", .object([("demo", .object([("certificate", "5CFd2fd1755d40ecb72977518be15d3b")]))])),
            ("webhookUrls", .array(["https://backend.example/all", "demo=http://10.0.0.9:8080/demo"])),
            ("webhookSecretFile", .string(secretFile)), ("webhookRetryFor", 90), ("webhookMessageContent", "size"),
        ])
        let start = try ServeStart(try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: file))
        let configuration = start.configuration
        #expect(configuration.host == "127.0.0.2" && configuration.port == 7100)
        #expect(configuration.dataDirectory == directory.path)
        #expect(start.storageKey != nil)
        #expect(configuration.adminListener?.host == "127.0.0.3" && configuration.adminListener?.port == 7101)
        #expect(configuration.serverAPI == ServerAPISettings(keys: .file("/srv/keys")))
        #expect(configuration.shutdownDrain == .seconds(4))
        #expect(configuration.cluster?.redis.url.host == "127.0.0.4" && configuration.cluster?.redis.url.password == "pw")
        #expect(configuration.cluster?.nodeID == "n7")
        #expect(configuration.log.level == .debug && configuration.log.format == .json)
        #expect(configuration.allowedOrigins == ["https://a.example"])
        #expect(configuration.maxConnectionsPerAddress == nil)
        #expect(configuration.maxFramesPerSecond == 50)
        #expect(configuration.loginTimeout == nil)
        #expect(configuration.appIds == ["demo"])
        #expect(start.credentials == ["demo": "5CFd2fd1755d40ecb72977518be15d3b"])
        let webhooks = try #require(configuration.webhooks)
        #expect(webhooks.targets.map(\.url) == ["https://backend.example/all"])
        #expect(webhooks.appTargets.mapValues { $0.map(\.url) } == ["demo": ["http://10.0.0.9:8080/demo"]])
        #expect(webhooks.secret == Array("s3cret".utf8), "the file's final line break is not part of the key")
        #expect(webhooks.retryWindow == .seconds(90))
        #expect(webhooks.messageContent == .size)

        let noLimits = try ServeStart(try EffectiveConfiguration.resolve(try ServeCommand.table.parse(["--no-rate-limits"]), environment: [:], file: nil))
        #expect(noLimits.configuration.limits == .withoutRateLimits && noLimits.configuration.maxFramesPerSecond == nil)
        #expect(noLimits.configuration.webhooks == nil, "no receiver, no webhooks")
        let off = try ServeStart(try EffectiveConfiguration.resolve(try ServeCommand.table.parse(["--admin-listen", "off"]), environment: [:], file: nil))
        #expect(off.configuration.adminListener == nil)
    }

    @Test func webhookReceiversAreCheckedInEveryLayerAndNeedTheirSecret() throws {
        // A receiver that is not an http(s) URL is refused from the flag, the variable and the file.
        let flags = try ServeCommand.table.parse(["--webhook-url", "ftp://backend.example/h", "--webhook-secret-file", "/srv/s"])
        let fromFlag = #expect(throws: UsageError.self) { try EffectiveConfiguration.resolve(flags, environment: [:], file: nil) }
        #expect(fromFlag?.description == "--webhook-url takes http://… or https://… URLs (or APP=URL), not 'ftp://backend.example/h'")
        let fromEnvironment = #expect(throws: ConfigurationError.self) {
            try EffectiveConfiguration.resolve(
                ParsedOptions(),
                environment: ["SWITCHBOARD_WEBHOOK_URL": "https://ok.example/h,=https://no-app.example/h", "SWITCHBOARD_WEBHOOK_SECRET_FILE": "/srv/s"],
                file: nil)
        }
        #expect(fromEnvironment?.description.contains("not '=https://no-app.example/h'") == true)
        let (_, problems) = ConfigFile.check(
            Array(#"{"webhookUrls": ["https://ok.example/h", "backend.example"], "webhookSecretFile": "/srv/s"}"#.utf8), path: "bad.json",
            rules: false)
        #expect(problems.map(\.key) == ["webhookUrls"], "\(problems)")
        #expect(problems.first?.message.contains("not 'backend.example'") == true)

        // Receivers without the secret that signs their deliveries, and a secret without receivers
        // (given as flags: a usage error).
        let unsigned = #expect(throws: UsageError.self) {
            try EffectiveConfiguration.resolve(try ServeCommand.table.parse(["--webhook-url", "https://a.example/h"]), environment: [:], file: nil)
        }
        #expect(unsigned?.description.contains("--webhook-url needs --webhook-secret-file") == true)
        let unused = #expect(throws: UsageError.self) {
            try EffectiveConfiguration.resolve(try ServeCommand.table.parse(["--webhook-secret-file", "/srv/s"]), environment: [:], file: nil)
        }
        #expect(unused?.description.contains("--webhook-secret-file needs --webhook-url") == true)

        // An empty secret file stops the start.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-secret-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let empty = directory.appendingPathComponent("empty.secret").path
        try "\n".write(toFile: empty, atomically: true, encoding: .utf8)
        let withEmpty = try EffectiveConfiguration.resolve(
            try ServeCommand.table.parse(["--webhook-url", "https://a.example/h", "--webhook-secret-file", empty]), environment: [:], file: nil)
        #expect(throws: ConfigurationError("webhook-secret-file \(empty) is empty")) { try ServeStart(withEmpty) }
    }

    @Test func anAppsOwnReceiversAreItsTargetsCheckedAsTheTopLevelOnesAndNeedTheSecret() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("app-webhooks-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let secretFile = directory.appendingPathComponent("webhook.secret").path
        try "s3cret".write(toFile: secretFile, atomically: true, encoding: .utf8)
        let apps: JSONValue = .object([
            ("demo", .object([("webhookUrls", .array(["https://demo.example/h", "http://10.0.0.5:8080/h"]))])),
            ("other", .object([])),
        ])
        // Per-app receivers alone turn webhooks on, beside the top-level APP=URL ones of the same app.
        let file = try Self.file([("apps", apps), ("webhookUrls", .array(["demo=http://all-of-demo.example/"])), ("webhookSecretFile", .string(secretFile))])
        let effective = try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: file)
        let webhooks = try #require(try ServeStart(effective).configuration.webhooks)
        #expect(webhooks.targets.isEmpty)
        #expect(webhooks.appTargets.mapValues { $0.map(\.url) } == [
            "demo": ["http://all-of-demo.example/", "https://demo.example/h", "http://10.0.0.5:8080/h"],
        ])
        let onlyPerApp = try Self.file([("apps", apps), ("webhookSecretFile", .string(secretFile))])
        let perApp = try ServeStart(try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: onlyPerApp))
        #expect(perApp.configuration.webhooks?.appTargets.mapValues { $0.map(\.url) } == ["demo": ["https://demo.example/h", "http://10.0.0.5:8080/h"]])
        #expect(perApp.configuration.webhooks?.secret == Array("s3cret".utf8))

        // Each URL through the top-level list's reader, without its APP= form.
        let (_, problems) = ConfigFile.check(
            Array(#"{"webhookSecretFile": "/s", "apps": {"demo": {"webhookUrls": ["https://ok.example/h", "ftp://x/", "other=http://y/"]}}}"#.utf8),
            path: "bad.json", rules: false)
        #expect(problems.map(\.key) == ["apps.demo.webhookUrls"], "\(problems)")
        #expect(problems.first?.message == "takes http://… or https://… URLs, not 'ftp://x/'")
        let (_, appForm) = ConfigFile.check(Array(#"{"webhookSecretFile": "/s", "apps": {"d": {"webhookUrls": ["other=http://y/"]}}}"#.utf8), path: "f.json")
        #expect(appForm.first?.message == "takes http://… or https://… URLs, not 'other=http://y/'")
        let (_, notArray) = ConfigFile.check(Array(#"{"apps": {"d": {"webhookUrls": "http://y/"}}}"#.utf8), path: "f.json")
        #expect(notArray.first?.message == "takes an array of strings")

        // Without the secret: refused in the file alone and in the layers; the secret with only an
        // app's receivers is used.
        let (_, unsigned) = ConfigFile.check(Array(#"{"apps": {"demo": {"webhookUrls": ["https://demo.example/h"]}}}"#.utf8), path: "f.json")
        #expect(unsigned.map(\.message) == ["apps.demo.webhookUrls needs \"webhookSecretFile\": every delivery is signed"])
        let layered = #expect(throws: ConfigurationError.self) {
            try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: try Self.file([("apps", apps)]))
        }
        #expect(layered?.description.contains("apps.demo.webhookUrls needs --webhook-secret-file") == true)
        let (_, secretUsed) = ConfigFile.check(Array(#"{"webhookSecretFile": "/s", "apps": {"d": {"webhookUrls": ["http://y/"]}}}"#.utf8), path: "f.json")
        #expect(secretUsed.isEmpty, "\(secretUsed)")
        let (_, emptyList) = ConfigFile.check(Array(#"{"webhookSecretFile": "/s", "apps": {"d": {"webhookUrls": []}}}"#.utf8), path: "f.json")
        #expect(emptyList.map(\.message) == ["\"webhookSecretFile\" needs \"webhookUrls\" or an app's webhookUrls"])
    }
}
