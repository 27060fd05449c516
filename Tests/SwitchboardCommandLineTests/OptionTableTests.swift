import Testing
@testable import SwitchboardCommandLine

/// Every command refuses what it does not know, by name, with the nearest known option.
@Suite(.timeLimit(.minutes(1))) struct OptionTableTests {
    /// Every table of the `switchboard` command, with one option each knows.
    static let tables: [(OptionTable, String)] =
        [(ServeCommand.table, "cluster"), (ConfigCommand.showTable, "log-level"), (TokenCommand.table, "app-id"), (EchoCommand.table, "listen")]
        + ClientCommand.verbs.map { ($0.table, "app-id") }

    @Test(arguments: tables.indices) func anUnknownOptionIsRefusedWithTheNearestKnownOne(_ index: Int) throws {
        let (table, known) = Self.tables[index]
        let typo = String(known.dropLast()) + "x" + "q"
        let error = #expect(throws: UsageError.self) { try table.parse(["--\(typo)", "1"]) }
        let message = try #require(error).description
        #expect(message.contains("'--\(typo)'"), "\(message)")
        #expect(message.contains("did you mean --\(known)?"), "\(message)")
        #expect(message.contains(table.command))
    }

    @Test func optionsFarFromAnyKnownOnePointToTheHelp() throws {
        let error = #expect(throws: UsageError.self) { try ServeCommand.table.parse(["--bogus", "1"]) }
        #expect(error?.description == "unknown option '--bogus' for 'switchboard serve'; see 'switchboard serve --help' for its options")
    }

    @Test func theIssuesTyposAreCaught() throws {
        let error = #expect(throws: UsageError.self) { try ServeCommand.table.parse(["--clustr", "redis://127.0.0.1:6379"]) }
        #expect(error?.description.contains("did you mean --cluster?") == true)
    }

    @Test func aMissingValueIsNamed() throws {
        let atEnd = #expect(throws: UsageError.self) { try ServeCommand.table.parse(["--listen"]) }
        #expect(atEnd?.description.hasPrefix("--listen needs a value (HOST:PORT)") == true)
        // The next word is another option: the value is missing, not "--node-id".
        let beforeOption = #expect(throws: UsageError.self) { try ServeCommand.table.parse(["--cluster", "--node-id", "a"]) }
        #expect(beforeOption?.description.hasPrefix("--cluster needs a value") == true)
    }

    @Test func aFlagTakesNoValueAndExtraArgumentsAreRefused() throws {
        #expect(throws: UsageError("--admin-tls takes no value")) { try ServeCommand.table.parse(["--admin-tls=yes"]) }
        let extra = #expect(throws: UsageError.self) { try ServeCommand.table.parse(["now"]) }
        #expect(extra?.description.contains("unexpected argument 'now'") == true)
    }

    @Test func valuesFlagsAndArgumentsAreRead() throws {
        let table = ClientCommand.verbs.first { $0.name == "pub" }!.table
        let parsed = try table.parse(["room", "--app-id=demo", "--json", "--", "--not-an-option"])
        #expect(parsed.arguments == ["room", "--not-an-option"])
        #expect(parsed.value("app-id") == "demo")
        #expect(parsed.flag("json"))
        let repeated = try ServeCommand.table.parse(["--allowed-origin", "https://a", "--allowed-origin", "https://b", "-h"])
        #expect(repeated.values["allowed-origin"] == ["https://a", "https://b"])
        #expect(repeated.wantsHelp)
    }

    @Test func theHelpListsEveryOptionOfTheTable() {
        for (table, _) in Self.tables {
            for option in table.options { #expect(table.help.contains("--\(option.name)"), "\(table.command) --\(option.name)") }
        }
        for setting in ServeSettings.all {
            #expect(ServeCommand.table.help.contains(setting.environment))
            #expect(ServeCommand.table.help.contains("key \"\(setting.key)\""))
        }
    }

    @Test func editDistanceCountsEdits() {
        #expect(NearestName.distance("cluster", "clustr") == 1)
        #expect(NearestName.distance("", "abc") == 3)
        #expect(NearestName.distance("kitten", "sitting") == 3)
        #expect(NearestName.among(["listen", "log-level"], to: "lisen") == "listen")
        #expect(NearestName.among(["listen", "log-level"], to: "zzzzzz") == nil)
    }
}
