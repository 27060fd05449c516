import Foundation
import SwitchboardCommandLine

/// The `switchboard` executable: every command lives in SwitchboardCommandLine.
@main
enum Switchboard {
    static func main() async {
        exit(await SwitchboardCommand.main(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment))
    }
}
