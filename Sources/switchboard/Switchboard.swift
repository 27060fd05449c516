import Foundation
import SwitchboardCommandLine

/// The `switchboard` executable: every command lives in SwitchboardCommandLine.
@main
enum Switchboard {
    static func main() async {
        let environment = ProcessInfo.processInfo.environment
        // First, on the main thread, before the first suspension hands work to other threads.
        MallocArenas.limit(environment: environment)
        exit(await SwitchboardCommand.main(Array(CommandLine.arguments.dropFirst()), environment: environment))
    }
}
