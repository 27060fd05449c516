import Foundation

/// Runs blocking work (child processes, pipe reads) on a thread of its own, so that tests do not
/// tie up the threads of Swift's global executor (on Linux, libdispatch's global pool, as wide as
/// the cores), which run every actor of an in-process server.
public enum BlockingWork {
    /// Runs `work` on a new thread and returns its result.
    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.name = "switchboard-test-blocking"
            thread.start()
        }
    }

    /// Runs `program` with `arguments` to its end, stdin empty, and returns its exit status and
    /// its standard output and error together. Blocks: call it inside `run`.
    public static func runProcess(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let result = try ChildProcesses.runCaptured(program, arguments, timeout: .seconds(180))
        return (result.status, result.text)
    }

    /// Reads `handle` up to the first newline (or its end) and returns the line without it.
    /// Blocks: call it inside `run`.
    public static func readLine(_ handle: FileHandle) -> String {
        var line = Data()
        while true {
            let byte = handle.readData(ofLength: 1)
            if byte.isEmpty || byte == Data([0x0A]) { break }
            line.append(byte)
        }
        return String(decoding: line, as: UTF8.self)
    }
}
