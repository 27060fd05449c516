import Foundation

/// The `switchboard` command: its subcommands by name, and the exit codes (2 for a mistake on
/// the command line, 1 for any other failure).
public enum SwitchboardCommand {
    static let usage = """
        usage: switchboard <command> [options]
          serve     run a Switchboard server
          config    show the effective configuration, check a file, print a default file
          client    talk to a server from the shell: pub, sub, send, presence, meta, lock …
          token     mint a development login token
          ws-echo   a bare WebSocket echo server, for conformance suites
        run 'switchboard <command> --help' for a command's options
        """

    static let commands = ["serve", "config", "client", "token", "ws-echo", "help"]

    /// Runs the command line `arguments` (without the program's name), writing to standard
    /// output and error; returns the exit code.
    public static func main(_ arguments: [String], environment: [String: String]) async -> Int32 {
        var arguments = arguments
        let command = arguments.isEmpty ? "" : arguments.removeFirst()
        do {
            switch command {
            case "serve": try await ServeCommand.run(arguments, environment: environment)
            case "config": print(try ConfigCommand.run(arguments, environment: environment))
            case "client": return try await ClientCommand.run(arguments, environment: environment, output: .standard)
            case "token": print(try TokenCommand.run(arguments, environment: environment))
            case "ws-echo": try await EchoCommand.run(arguments)
            case "help", "--help", "-h": print(usage)
            case "":
                writeError(usage)
                return 2
            default:
                let hint = NearestName.among(commands, to: command).map { "; did you mean '\($0)'?" } ?? ""
                writeError("switchboard: unknown command '\(command)'\(hint)\n\(usage)")
                return 2
            }
            return 0
        } catch let error as UsageError {
            writeError("switchboard: \(error)")
            return 2
        } catch let problems as ConfigProblems {
            writeError(problems.description)
            return 1
        } catch {
            writeError("switchboard: \(error)")
            return 1
        }
    }

    static func writeError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
