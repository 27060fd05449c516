import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
    print(BenchOptions.usage)
    exit(0)
}
do {
    let options = try BenchOptions(arguments)
    let line = try await BenchRun(options: options).run()
    print(line)
} catch let error as UsageError {
    FileHandle.standardError.write(Data((error.description + "\n").utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data(("switchboard-bench: \(error)\n").utf8))
    exit(1)
}
