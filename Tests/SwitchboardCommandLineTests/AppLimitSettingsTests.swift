import Foundation
import Testing
import SwitchboardCore
import SwitchboardServer
import SwitchboardTestKit
@testable import SwitchboardCommandLine

/// Every limit an app can set (`LimitSettings.perApp`) is read from `apps.<id>.limits` into that
/// app's limits alone, over the server's; `config check` refuses a wrong one by its key; a
/// reload applies the server's and the apps' limits and the apps served.
@Suite(.timeLimit(.minutes(1))) struct AppLimitSettingsTests {
    /// A value in range other than the default (the app's).
    static func sample(_ limit: LimitSetting) -> Int { LimitSettingsTests.sample(limit) }

    /// Another value in range, the server's.
    static func serverSample(_ limit: LimitSetting) -> Int {
        let low = limit.range.lowerBound
        return low == sample(limit) || low == limit.defaultValue ? low + 1 : low
    }

    /// The members that give `limit` the value `value`, with the other end of its range, if any,
    /// where it cannot cross.
    static func members(_ limit: LimitSetting, _ value: Int) -> [(String, Int)] {
        var members = [(limit.name, value)]
        if limit.name.hasSuffix("Min") { members.append((String(limit.name.dropLast(3)) + "Max", limit.range.upperBound)) }
        if limit.name.hasSuffix("Max") { members.append((String(limit.name.dropLast(3)) + "Min", limit.range.lowerBound)) }
        return members
    }

    /// A file whose line 2 holds the server's `limits` of `group`, and whose app `alpha` gives its
    /// own from line 5 on (one a line); app `beta` has none.
    static func file(_ group: String, server: [(String, Int)], alpha: [(String, JSONValue)]) -> (ConfigFile?, [ConfigProblem]) {
        let quoted = JSONValue.string(group).text
        let serverMembers = server.map { "\(JSONValue.string($0.0).text): \($0.1)" }.joined(separator: ", ")
        let text = """
            {
              "limits": {\(quoted): {\(serverMembers)}},
              "apps": {
                "alpha": {"limits": {\(quoted): {
                  \(alpha.map { "\(JSONValue.string($0.0).text): \($0.1.text)" }.joined(separator: ",\n      "))
                }}},
                "beta": {}
              }
            }

            """
        return ConfigFile.check(Array(text.utf8), path: "apps.json")
    }

    @Test(arguments: LimitSettings.perApp.map(\.key)) func eachPerAppLimitIsReadFromTheFileForItsAppAlone(_ key: String) throws {
        let limit = try #require(LimitSettings.keyed(key))
        let alpha = Self.members(limit, Self.sample(limit)).map { ($0.0, JSONValue.integer(Int64($0.1))) }
        let (file, problems) = Self.file(limit.group, server: Self.members(limit, Self.serverSample(limit)), alpha: alpha)
        #expect(problems.isEmpty, "\(problems)")
        // The file names the apps, or the flags do: the file's limits of an app count either way.
        for options in [ParsedOptions(), try ServeCommand.table.parse(["--app-id", "alpha", "--app-id", "beta"])] {
            let effective = try EffectiveConfiguration.resolve(options, environment: [:], file: file)
            let app = try #require(effective.apps.first { $0.id == "alpha" })
            #expect(app.limits.first { $0.name == key } == .init(name: key, value: .number(Self.sample(limit)), source: .file("apps.json", line: 5)))
            #expect(effective.apps.first { $0.id == "beta" }?.limits == [])
            let configuration = try ServeStart(effective).configuration
            #expect(limit.read(try #require(configuration.appLimits["alpha"])) == Self.sample(limit))
            // Every other app gets the server's.
            #expect(configuration.appLimits["beta"] == nil)
            #expect(limit.read(configuration.limits) == Self.serverSample(limit))
            let book = LimitsBook(ServeStart.limitsEdition(of: effective))
            #expect(limit.read(book.limits(for: "alpha")) == Self.sample(limit))
            #expect(limit.read(book.limits(for: "beta")) == Self.serverSample(limit))
        }
        // Out of range, or not a whole number: refused with the app's key and the line.
        for wrong: JSONValue in [.integer(Int64(limit.range.upperBound) + 1), .integer(Int64(limit.range.lowerBound) - 1), "10"] {
            let (_, refused) = Self.file(limit.group, server: [], alpha: [(limit.name, wrong)])
            #expect(refused.map(\.key) == ["apps.alpha.\(key)"] && refused.first?.line == 5, "\(wrong): \(refused)")
        }
    }

    @Test(arguments: LimitSettings.all.filter { !$0.perApp }.map(\.key)) func aServerWideLimitUnderAnAppIsRefusedByItsKey(_ key: String) throws {
        let limit = try #require(LimitSettings.keyed(key))
        let (_, refused) = Self.file(limit.group, server: [], alpha: [(limit.name, .integer(Int64(limit.defaultValue)))])
        #expect(refused.map(\.description) == ["apps.json:5: key \"apps.alpha.\(key)\" is server-wide, not per app: set \(key)"])
    }

    @Test func anAppsRangeMustNotCrossTheServersAndItsKeysAreCheckedByName() {
        let (_, crossed) = Self.file("locks", server: [("ttlMax", 100)], alpha: [("ttlMin", 200)])
        #expect(crossed.map(\.description) == ["apps.json:5: key \"apps.alpha.limits.locks.ttlMin\" (200) is above limits.locks.ttlMax (100)"])
        let (_, unknown) = Self.file("locks", server: [], alpha: [("perChanel", 3)])
        #expect(unknown.first?.message == "is not a setting; did you mean \"perChannel\"?")
        let (_, key) = ConfigFile.check(Array(#"{"apps": {"alpha": {"limitz": {}}}}"#.utf8), path: "x.json")
        #expect(key.map(\.description) == ["x.json:1: key \"apps.alpha.limitz\" is not a setting; did you mean \"limits\"?"])
        let (_, notObject) = ConfigFile.check(Array(#"{"apps": {"alpha": {"limits": 5}}}"#.utf8), path: "x.json")
        #expect(notObject.first?.key == "apps.alpha.limits")
    }

    @Test func configShowGivesAnAppsOwnLimitsWithTheirSourceAndDefaultDocumentsThem() throws {
        let (file, _) = Self.file("messages", server: [], alpha: [("payloadMaxBytes", 1000)])
        let shown = ConfigCommand.show(try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: file))
        let row = try #require(shown.split(separator: "\n").first { $0.hasPrefix("apps.alpha.limits.messages.payloadMaxBytes ") })
        #expect(row.split(separator: " ", omittingEmptySubsequences: true).map(String.init) == [
            "apps.alpha.limits.messages.payloadMaxBytes", "1000", "file", "apps.json:5",
        ])
        #expect(!shown.contains("apps.beta.limits"))
        let text = try ConfigCommand.run(["default"], environment: [:])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect((object["_apps"] as? String)?.contains("\"limits\": the app's own limits") == true)
        let groups = try #require(object["limits"] as? [String: [String: Any]])
        for limit in LimitSettings.all {
            let comment = groups[limit.group]?["_" + limit.name] as? String ?? ""
            #expect(comment.contains(limit.perApp ? "; per app;" : "; server-wide;"), "\(limit.key): \(comment)")
        }
    }

    static let certificate = "5CFd2fd1755d40ecb72977518be15d3b"

    static func resolve(_ text: String) throws -> EffectiveConfiguration {
        let (file, problems) = ConfigFile.check(Array(text.utf8), path: "switchboard.json")
        #expect(problems.isEmpty, "\(problems)")
        return try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: file)
    }

    static let before = #"""
        {"limits": {"messages": {"payloadMaxBytes": 1000}, "sessions": {"resumeBufferMaxBytes": 1000}},
         "apps": {"alpha": {"limits": {"messages": {"payloadMaxBytes": 10}}}, "gone": {}}}
        """#
    static let after = #"""
        {"limits": {"messages": {"payloadMaxBytes": 2000}, "sessions": {"resumeBufferMaxBytes": 2000}},
         "apps": {"alpha": {"limits": {"messages": {"payloadMaxBytes": 20}}},
                  "beta": {"certificate": "\#(certificate)", "limits": {"sessions": {"concurrentUsers": 1}}}}}
        """#

    @Test func aReloadAppliesTheServersAndTheAppsLimitsAndTheAppsServed() throws {
        let before = try Self.resolve(Self.before), after = try Self.resolve(Self.after)
        let plan = ReloadPlan(from: before, to: after, certificatesLive: true)
        #expect(plan.applied == [
            .init(name: "apps.alpha.limits.messages.payloadMaxBytes", old: "10", new: "20"),
            .init(name: "apps.beta", old: "not served", new: "served"),
            .init(name: "apps.gone", old: "served", new: "not served (new logins refused)"),
            .init(name: "limits.messages.payloadMaxBytes", old: "1000", new: "2000"),
        ])
        #expect(plan.needRestart == ["limits.sessions.resumeBufferMaxBytes"])
        #expect(plan.lines.contains("reload: apps.alpha.limits.messages.payloadMaxBytes 10 → 20"))
        #expect(plan.lines.contains("reload: changed but applied only at the next start: limits.sessions.resumeBufferMaxBytes"))
        #expect(ServeStart.credentials(of: plan.running) == ["beta": Self.certificate])
        let book = LimitsBook(ServeStart.limitsEdition(of: before))
        let alphaBefore = book.limits(for: "alpha")
        plan.apply(to: ServerLog(level: .none) { _ in }, limits: book)
        #expect(alphaBefore.messages.payloadMaxBytes == 10)
        #expect(book.limits(for: "alpha").messages.payloadMaxBytes == 20)
        #expect(book.limits(for: "beta").messages.payloadMaxBytes == 2000 && book.limits(for: "beta").sessions.concurrentUsers == 1)
        #expect(book.serves("alpha") && book.serves("beta") && !book.serves("gone"))
        // What takes a restart stays as it was.
        #expect(book.server.sessions.resumeBufferMaxBytes == 1000)
        // The same reload again changes nothing.
        #expect(ReloadPlan(from: plan.running, to: after, certificatesLive: true).lines == ["reload: changed but applied only at the next start: limits.sessions.resumeBufferMaxBytes"])
    }

    @Test func anAppWithACertificateWaitsForARestartWhenTheServerStartedWithoutOne() throws {
        let plan = ReloadPlan(from: try Self.resolve(Self.before), to: try Self.resolve(Self.after), certificatesLive: false)
        #expect(!plan.applied.contains { $0.name == "apps.beta" })
        #expect(plan.needRestart.contains("apps.beta.certificate"))
        #expect(plan.lines.contains { $0.hasPrefix("reload: the server started without app certificates") })
        #expect(!plan.running.apps.contains { $0.id == "beta" })
        let book = LimitsBook()
        plan.apply(to: ServerLog(level: .none) { _ in }, limits: book)
        #expect(!book.serves("beta") && book.serves("alpha"))
        // With certificates in force, a changed one is applied, shown masked.
        let changed = try Self.resolve(Self.after.replacingOccurrences(of: Self.certificate, with: "0123456789abcdef0123456789abcdef"))
        let live = ReloadPlan(from: try Self.resolve(Self.after), to: changed, certificatesLive: true)
        #expect(live.applied == [.init(name: "apps.beta.certificate", old: "****5d3b", new: "****cdef")])
    }
}
