import Foundation
import Testing
import SwitchboardServer
@testable import SwitchboardCommandLine

/// `config check` and `config default`: what a file may say, and every mistake named by key and
/// line.
@Suite(.timeLimit(.minutes(1))) struct ConfigFileTests {
    @Test func theDefaultFileIsCompleteAndPassesTheCheck() throws {
        let text = try ConfigCommand.run(["default"], environment: [:])
        let (file, problems) = ConfigFile.check(Array(text.utf8), path: "default.json")
        #expect(problems.isEmpty, "\(problems)")
        let parsed = try #require(file)
        // Every key is there, at its default, with its comment.
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        for setting in ServeSettings.all {
            #expect(object.keys.contains(setting.key), "\(setting.key)")
            #expect(object["_" + setting.key] is String, "\(setting.key)")
            #expect(parsed[setting.key] == setting.defaultValue, "\(setting.key)")
        }
        #expect(object["apps"] is [String: Any] && object["_apps"] is String)
        // Read as the defaults: nothing differs from a run with no file.
        let withFile = try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: parsed)
        let without = try EffectiveConfiguration.resolve(ParsedOptions(), environment: [:], file: nil)
        #expect(withFile.entries.map(\.value) == without.entries.map(\.value))
        #expect(try Self.withFile(text) { try ConfigCommand.run(["check", $0], environment: [:]) }.hasSuffix(": ok"))
    }

    @Test func everyMistakeIsNamedWithItsKeyAndLine() throws {
        let text = """
            {
              "lissten": "127.0.0.1:1",
              "maxFramesPerSecond": -3,
              "logLevel": "loud",
              "adminTls": "yes",
              "allowedOrigins": "https://a.example",
              "apps": {
                "demo": {"certificate": 5,
                         "certficate": "x"},
                "other": []
              },
              "_note": 3,
              "nodeId": "n1",
              "loginTimeout": 1.5
            }
            """
        let (file, problems) = ConfigFile.check(Array(text.utf8), path: "bad.json")
        #expect(file == nil)
        let found = problems.map { "\($0.line ?? 0) \($0.key): \($0.message)" }
        #expect(found == [
            "2 lissten: is not a setting; did you mean \"listen\"?",
            "3 maxFramesPerSecond: takes 0…10000000, not -3",
            "4 logLevel: takes debug, info, warning, error, none, not 'loud'",
            "5 adminTls: takes true or false",
            "6 allowedOrigins: takes an array of strings",
            "8 apps.demo.certificate: takes a string",
            "9 apps.demo.certficate: is not a setting; did you mean \"certificate\"?",
            "10 apps.other: takes an object of the app's settings ({} for none)",
            "12 _note: is a comment (it starts with _) and takes a string",
            "14 loginTimeout: takes a whole number in 0…86400",
            "13 : \"nodeId\" needs \"cluster\"",
        ])
        let thrown = #expect(throws: ConfigProblems.self) { try Self.withFile(text) { try ConfigCommand.run(["check", $0], environment: [:]) } }
        #expect(thrown?.description.split(separator: "\n").count == 11)
        #expect(thrown?.description.contains(".json:3: key \"maxFramesPerSecond\" takes 0…10000000, not -3") == true)
    }

    @Test func textThatIsNotJSONIsRefusedAtItsLine() {
        let (_, problems) = ConfigFile.check(Array("{\n  \"listen\": \"127.0.0.1:1\"\n  \"logLevel\": \"info\"\n}".utf8), path: "f.json")
        #expect(problems == [ConfigProblem(path: "f.json", line: 3, key: "", message: "is not JSON: expected ',' or '}'")])
        let (_, notObject) = ConfigFile.check(Array("[1]".utf8), path: "f.json")
        #expect(notObject.map(\.message) == ["must be one JSON object"])
        let (_, twice) = ConfigFile.check(Array("{\"listen\": \"a:1\",\n\"listen\": \"b:2\"}".utf8), path: "f.json")
        #expect(twice.first?.line == 2)
    }

    @Test func commentsAndNullsAreAccepted() throws {
        let (file, problems) = ConfigFile.check(
            Array("{\"_why\": \"a note\", \"tlsCert\": null, \"apps\": {\"demo\": {\"_c\": \"x\"}}}".utf8), path: "f.json")
        #expect(problems.isEmpty)
        #expect(file?["tlsCert"] == nil)
        #expect(file?.apps.map(\.id) == ["demo"])
    }

    @Test func aFileThatCannotBeReadIsNamed() {
        #expect(throws: ConfigurationError.self) { try ConfigCommand.run(["check", "/nonexistent/x.json"], environment: [:]) }
        let usage = #expect(throws: UsageError.self) { try ConfigCommand.run(["chek", "x"], environment: [:]) }
        #expect(usage?.description.contains("did you mean 'check'?") == true)
    }

    /// Runs `body` with the path of a new file holding `text`, removed afterwards.
    static func withFile<Result>(_ text: String, _ body: (String) throws -> Result) throws -> Result {
        let path = try write(text)
        defer { remove(path) }
        return try body(path)
    }

    /// The path of a new file holding `text`; the caller removes it (`remove`).
    static func write(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID()).json").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Removes a file `write` made.
    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }
}
