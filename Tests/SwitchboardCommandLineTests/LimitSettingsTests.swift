import Foundation
import Testing
import SwitchboardCore
import SwitchboardServer
import SwitchboardTestKit
@testable import SwitchboardCommandLine

/// Every limit the file can set (`LimitSettings.all`) reaches the server's `Limits`, and only
/// values in its range are taken.
@Suite(.timeLimit(.minutes(1))) struct LimitSettingsTests {
    /// A value in range other than the default.
    static func sample(_ limit: LimitSetting) -> Int {
        limit.defaultValue == limit.range.upperBound ? limit.range.upperBound - 1 : limit.range.upperBound
    }

    static func file(_ group: String, _ members: [(String, JSONValue)]) -> (ConfigFile?, [ConfigProblem]) {
        let text = "{\n  \"limits\": {\n    \(JSONValue.string(group).text): {\n"
            + members.map { "      \(JSONValue.string($0.0).text): \($0.1.text)" }.joined(separator: ",\n") + "\n    }\n  }\n}\n"
        return ConfigFile.check(Array(text.utf8), path: "limits.json")
    }

    @Test(arguments: LimitSettings.all.map(\.key)) func eachLimitIsReadFromTheFileIntoTheServersLimits(_ key: String) throws {
        let limit = try #require(LimitSettings.all.first { $0.key == key })
        // A range's other end moves along where the sample would cross it.
        var members: [(String, JSONValue)] = [(limit.name, .integer(Int64(Self.sample(limit))))]
        if limit.name.hasSuffix("Min") { members.append((String(limit.name.dropLast(3)) + "Max", .integer(Int64(limit.range.upperBound)))) }
        if limit.name.hasSuffix("Max") { members.append((String(limit.name.dropLast(3)) + "Min", .integer(Int64(limit.range.lowerBound)))) }
        let (file, problems) = Self.file(limit.group, members)
        #expect(problems.isEmpty, "\(problems)")
        let effective = try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: file)
        let entry = try #require(effective.limits.first { $0.name == key })
        #expect(entry == .init(name: key, value: .number(Self.sample(limit)), source: .file("limits.json", line: 4)))
        let limits = try ServeStart(effective).configuration.limits
        #expect(limit.read(limits) == Self.sample(limit))
        #expect(limit.read(Limits()) == limit.defaultValue)
        // Out of range, or not a whole number: refused with the key and the line.
        for wrong: JSONValue in [.integer(Int64(limit.range.upperBound) + 1), .integer(Int64(limit.range.lowerBound) - 1), "10"] {
            let (_, refused) = Self.file(limit.group, [(limit.name, wrong)])
            #expect(refused.map(\.key) == [key] && refused.first?.line == 4, "\(wrong): \(refused)")
        }
    }

    @Test func theDefaultsAreTheReferencesAndNoRateLimitsStillLiftsTheRates() throws {
        let defaults = try ServeStart(try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: nil))
        #expect(defaults.configuration.limits == Limits())
        let (file, _) = Self.file("messages", [("publishesPerSecondPerClient", 5), ("payloadMaxBytes", 1000)])
        let lifted = try ServeStart(try EffectiveConfiguration.resolve(try ServeCommand.table.parse(["--no-rate-limits"]), environment: [:], file: file))
        #expect(lifted.configuration.limits.messages.publishesPerSecondPerClient == nil)
        #expect(lifted.configuration.limits.messages.payloadMaxBytes == 1000)
        let zero = try ServeStart(try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: Self.file("messages", [("perChannelPerSecond", 0)]).0))
        #expect(zero.configuration.limits.messages.perChannelPerSecond == nil)
    }

    @Test func aRangeWhoseEndsCrossIsRefusedAndUnknownNamesGetTheNearest() {
        let (_, crossed) = Self.file("locks", [("ttlMin", 400)])
        #expect(crossed.map(\.description) == ["limits.json:4: key \"limits.locks.ttlMin\" (400) is above limits.locks.ttlMax (300)"])
        let (_, unknown) = Self.file("messages", [("perChanelPerSecond", 3)])
        #expect(unknown.first?.message == "is not a setting; did you mean \"perChannelPerSecond\"?")
        let (_, group) = ConfigFile.check(Array("{\"limits\": {\"sesions\": {}}}".utf8), path: "x.json")
        #expect(group.first?.message == "is not a setting; did you mean \"sessions\"?")
    }

    @Test func theDefaultFileHoldsEveryLimitAndAResumeBufferChangeTakesARestart() throws {
        let text = try ConfigCommand.run(["default"], environment: [:])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let groups = try #require(object["limits"] as? [String: [String: Any]])
        for limit in LimitSettings.all {
            #expect(groups[limit.group]?[limit.name] as? Int == limit.defaultValue, "\(limit.key)")
            #expect(groups[limit.group]?["_" + limit.name] is String, "\(limit.key)")
        }
        let before = try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: nil)
        let after = try EffectiveConfiguration.resolve(
            ParsedOptions(), environment: [:], file: Self.file("sessions", [("resumeBufferMaxMessages", 8)]).0)
        let plan = ReloadPlan(from: before, to: after)
        #expect(plan.applied.isEmpty && plan.needRestart == ["limits.sessions.resumeBufferMaxMessages"])
        #expect(plan.running.limits == before.limits)
    }

    @Test func aChangedLimitIsAppliedOnReloadAndOnlyTheResumeBuffersWait() throws {
        let before = try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: nil)
        let after = try EffectiveConfiguration.resolve(
            ParsedOptions(), environment: [:], file: Self.file("messages", [("publishesPerSecondPerClient", 7), ("payloadMaxBytes", 100)]).0)
        let plan = ReloadPlan(from: before, to: after)
        #expect(plan.applied == [
            .init(name: "limits.messages.payloadMaxBytes", old: "32768", new: "100"),
            .init(name: "limits.messages.publishesPerSecondPerClient", old: "60", new: "7"),
        ])
        #expect(plan.needRestart.isEmpty)
        let book = LimitsBook()
        plan.apply(to: ServerLog(level: .none) { _ in }, limits: book)
        #expect(book.server.messages.publishesPerSecondPerClient == 7 && book.server.messages.payloadMaxBytes == 100)
        #expect(book.limits(for: "any").messages.payloadMaxBytes == 100)
        #expect(LimitSettings.all.filter { $0.reload == .restart }.map(\.key) == [
            "limits.sessions.resumeBufferMaxMessages", "limits.sessions.resumeBufferMaxBytes",
            "limits.sessions.resumeBufferTotalBytes", "limits.sessions.resumeReplayMaxMessages",
            "limits.sessions.resumeReplayMaxBytes",
        ])
    }

    @Test func theDocumentListsEveryKey() throws {
        let document = try String(
            contentsOf: ProcessRunner.repositoryRoot().appendingPathComponent("docs/CONFIGURATION.md"), encoding: .utf8)
        for setting in ServeSettings.all { #expect(document.contains("| `\(setting.key)` |"), "\(setting.key)") }
        // Each limit's row says whether an app can set its own and whether a SIGHUP changes it.
        for limit in LimitSettings.all {
            let row = document.split(separator: "\n").first { $0.hasPrefix("| `\(limit.group)` | `\(limit.name)` |") } ?? ""
            let columns = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(columns.count == 7, "\(limit.key): \(row)")
            #expect(columns.dropFirst(4).first == (limit.perApp ? "yes" : "no"), "\(limit.key): \(row)")
            #expect(columns.dropFirst(5).first == (limit.reload == .live ? "**live**" : "restart"), "\(limit.key): \(row)")
        }
        #expect(document.contains("| `apps.<id>.limits` |"))
    }
}
