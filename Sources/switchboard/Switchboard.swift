import Foundation

/// The `switchboard` command: `serve` runs a server; `token` mints a development token.
@main
enum Switchboard {
    static let usage = """
        usage: switchboard <command> [options]
          serve     run a Switchboard server
          token     mint a development login token
          ws-echo   a bare WebSocket echo server, for conformance suites
        run 'switchboard <command> --help' for a command's options
        """

    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        let command = arguments.isEmpty ? "" : arguments.removeFirst()
        do {
            switch command {
            case "serve": try await ServeCommand.run(arguments)
            case "token": try TokenCommand.run(arguments)
            case "ws-echo": try await EchoCommand.run(arguments)
            case "help", "--help", "-h":
                print(usage)
            default:
                FileHandle.standardError.write(Data((usage + "\n").utf8))
                exit(2)
            }
        } catch let error as UsageError {
            FileHandle.standardError.write(Data("switchboard: \(error)\n".utf8))
            exit(2)
        } catch {
            FileHandle.standardError.write(Data("switchboard: \(error)\n".utf8))
            exit(1)
        }
    }
}
