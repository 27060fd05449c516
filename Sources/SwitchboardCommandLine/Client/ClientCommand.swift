import Foundation
import SwitchboardClient
import SwitchboardServer

/// `switchboard client`: a shell's way to a server, through the SDK. Each run logs in, does one
/// thing (or, for `sub`, prints what arrives until interrupted or `--count` records), and logs
/// out.
public enum ClientCommand {
    /// Options every verb takes.
    static let connectionOptions: [OptionSpec] = [
        OptionSpec("url", .value, "URL", "the server (SWITCHBOARD_URL, default ws://127.0.0.1:9100)"),
        OptionSpec("app-id", .value, "ID", "the app (SWITCHBOARD_APP_ID)"),
        OptionSpec("user", .value, "USER", "log in as USER (SWITCHBOARD_USER, default cli-<random>)"),
        OptionSpec("token", .value, "TOKEN", "the login token (SWITCHBOARD_TOKEN); none for a development server"),
        OptionSpec(
            "app-certificate", .value, "CERT",
            "mint the login token from the app certificate (SWITCHBOARD_APP_CERTIFICATE)\ninstead of --token"),
        OptionSpec("ca-file", .value, "FILE", "trust the CA certificates in FILE for wss:// (self-signed servers)"),
        OptionSpec("json", .flag, "", "print JSON lines instead of text"),
        OptionSpec("request-id", .value, "ID", "send ID with each request; the server writes it in its log lines"),
        OptionSpec("timeout", .value, "SECONDS", "give up on a server that does not answer the login (default 10)"),
    ]

    /// What a verb is: its arguments, its own options and what it does once logged in.
    struct Verb: Sendable {
        let name: String
        let synopsis: String
        let arguments: ClosedRange<Int>
        let options: [OptionSpec]
        let help: String
        let act: @Sendable (ClientSession, ParsedOptions) async throws -> Void

        var table: OptionTable {
            OptionTable(
                command: "switchboard client \(name)", synopsis: synopsis + " [options]", options: options + connectionOptions,
                footer: help, maxArguments: arguments.upperBound)
        }
    }

    static let customType = OptionSpec("custom-type", .value, "TYPE", "the message's customType")

    static let verbs: [Verb] = [
        Verb(name: "login", synopsis: "", arguments: 0...0, options: [], help: "logs in and out: checks the URL, app id and token") { session, _ in
            session.emit(ClientRecord(
                text: "logged in as \(session.user) to app \(session.appId) at \(session.url)",
                fields: [("event", "loggedIn"), ("user", .string(session.user)), ("app", .string(session.appId)), ("url", .string(session.url))]))
        },
        Verb(
            name: "pub", synopsis: "CHANNEL TEXT", arguments: 2...2, options: [customType],
            help: "publishes TEXT on the message channel CHANNEL", act: ClientActions.publish),
        Verb(
            name: "send", synopsis: "USER TEXT", arguments: 2...2, options: [customType],
            help: "sends TEXT to USER (the user channel)", act: ClientActions.send),
        Verb(
            name: "sub", synopsis: "CHANNEL", arguments: 1...1,
            options: [OptionSpec("count", .value, "N", "stop after N messages and presence events (default: until Ctrl-C)")],
            help: "subscribes to CHANNEL with presence and prints messages and presence events as they arrive",
            act: ClientActions.subscribe),
        Verb(
            name: "presence", synopsis: "CHANNEL", arguments: 1...1, options: [],
            help: "lists who is in CHANNEL (whoNow), with their states", act: ClientActions.whoNow),
        Verb(
            name: "where", synopsis: "USER", arguments: 1...1, options: [],
            help: "lists the channels USER is in (whereNow)", act: ClientActions.whereNow),
        Verb(
            name: "meta", synopsis: "get|set|remove CHANNEL [KEY [VALUE]]", arguments: 2...4,
            options: [
                OptionSpec("revision", .value, "N", "compare-and-set: write only if the item is at revision N"),
                OptionSpec("lock", .value, "NAME", "write only while holding the lock NAME"),
            ],
            help: "reads, sets or removes a channel's metadata items", act: ClientActions.metadata),
        Verb(
            name: "lock", synopsis: "set|acquire|release|list CHANNEL [NAME]", arguments: 2...3,
            options: [
                OptionSpec("ttl", .value, "SECONDS", "set: the lock's ttl once its owner is gone (default 10)"),
                OptionSpec("retry", .flag, "", "acquire: wait in the queue for the lock"),
            ],
            help: "sets, acquires, releases or lists a channel's locks (a lock lives until it is\nremoved; the command's logout at its end releases what it acquired)",
            act: ClientActions.lock),
    ]

    static var usage: String {
        "usage: switchboard client <verb> [arguments] [options]\n"
            + verbs.map { "  \($0.name) \($0.synopsis)".padding(toLength: 48, withPad: " ", startingAt: 0) + $0.help.split(separator: "\n")[0] }
            .joined(separator: "\n")
            + "\nrun 'switchboard client <verb> --help' for a verb's options"
    }

    /// Runs `client` with `arguments` (those after `client`); returns the exit code: 0 done, 1
    /// refused by the server or not reached. A mistake on the command line throws `UsageError`.
    public static func run(_ arguments: [String], environment: [String: String], output: ClientOutput) async throws -> Int32 {
        guard let name = arguments.first else { throw UsageError("client needs a verb\n" + usage) }
        if ["help", "--help", "-h"].contains(name) {
            output.record(usage)
            return 0
        }
        guard let verb = verbs.first(where: { $0.name == name }) else {
            let hint = NearestName.among(verbs.map(\.name), to: name).map { "; did you mean '\($0)'?" } ?? ""
            throw UsageError("unknown client verb '\(name)'\(hint)\n" + usage)
        }
        let options = try verb.table.parse(Array(arguments.dropFirst()))
        if options.wantsHelp {
            output.record(verb.table.help)
            return 0
        }
        guard verb.arguments.contains(options.arguments.count) else {
            throw UsageError("client \(verb.name) takes \(verb.synopsis); see 'switchboard client \(verb.name) --help'")
        }
        let settings = try ClientSettings(options, environment: environment)
        do {
            let session = try await ClientSession.open(settings, output: output)
            defer { session.close() }
            try await verb.act(session, options)
            return 0
        } catch let error as ClientFailure {
            output.note("switchboard client: \(error)")
            return 1
        }
    }
}

/// The connection settings of a run.
struct ClientSettings {
    let url: String
    let appId: String
    let user: String
    let token: String
    let caFile: String?
    let json: Bool
    let requestId: String?
    let timeout: Duration

    init(_ options: ParsedOptions, environment: [String: String]) throws {
        func value(_ name: String, _ variable: String) -> String? {
            options.value(name) ?? environment[variable].flatMap { $0.isEmpty ? nil : $0 }
        }
        url = value("url", "SWITCHBOARD_URL") ?? "ws://127.0.0.1:9100"
        guard let appId = value("app-id", "SWITCHBOARD_APP_ID") else {
            throw UsageError("client needs --app-id (or SWITCHBOARD_APP_ID)")
        }
        self.appId = appId
        user = value("user", "SWITCHBOARD_USER") ?? "cli-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        if let token = value("token", "SWITCHBOARD_TOKEN") {
            self.token = token
        } else if let certificate = value("app-certificate", "SWITCHBOARD_APP_CERTIFICATE") {
            token = try TokenCommand.mint(appId: appId, certificate: certificate, userId: user, expire: 3600)
        } else {
            token = ""
        }
        caFile = options.value("ca-file")
        json = options.flag("json")
        requestId = options.value("request-id")
        let timeoutText = options.value("timeout") ?? "10"
        guard let seconds = Int(timeoutText), seconds > 0 else { throw UsageError("--timeout takes seconds, not '\(timeoutText)'") }
        timeout = .seconds(seconds)
    }
}

/// Why a client run failed: the server refused, or could not be reached.
struct ClientFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
    init(_ error: RtmErrorInfo) { description = error.description }
}
