import Foundation

do {
    let options = try BenchOptions(Array(CommandLine.arguments.dropFirst()))
    let line = try await BenchRun(options: options).run()
    print(line)
} catch let error as UsageError {
    FileHandle.standardError.write(Data((error.description + "\n").utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data(("switchboard-bench: \(error)\n").utf8))
    exit(1)
}
