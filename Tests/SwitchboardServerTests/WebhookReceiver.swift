import Foundation
import SwitchboardTestKit

/// tools/webhook_receiver.py as a child process: a real HTTP receiver that checks each delivery's
/// signature with Python's `hmac` and logs it as a JSON line. A receiver still running when its
/// test lets go of it (a `#require` that threw) is killed then: it holds the test process's
/// standard error, and `swift test` would wait for it to close.
final class WebhookReceiver {
    let process: Process
    let port: Int
    let log: URL
    let secretFile: URL

    /// The receiver's URL.
    var url: String { "http://127.0.0.1:\(port)/hooks" }

    /// Starts a receiver in `directory` (its secret file and log live there) with `arguments`
    /// (`--fail-first N`, `--mode …`, `--port P`).
    static func start(in directory: URL, secret: String = "webhook-secret", _ arguments: [String] = []) async throws -> WebhookReceiver {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let secretFile = directory.appendingPathComponent("webhook.secret")
        try Data((secret + "\n").utf8).write(to: secretFile)
        let log = directory.appendingPathComponent("received-\(UUID()).jsonl")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["python3", ProcessRunner.repositoryRoot().appendingPathComponent("tools/webhook_receiver.py").path,
             "--secret-file", secretFile.path, "--log", log.path] + arguments
        let output = Pipe()
        process.standardOutput = output
        try ChildProcesses.start(process)
        let handle = output.fileHandleForReading
        let line = try await BlockingWork.run { BlockingWork.readLine(handle) }
        guard let port = Int(line) else { throw ReceiverError("the receiver printed '\(line)', not its port") }
        return WebhookReceiver(process: process, port: port, log: log, secretFile: secretFile)
    }

    private init(process: Process, port: Int, log: URL, secretFile: URL) {
        self.process = process
        self.port = port
        self.log = log
        self.secretFile = secretFile
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Every request it logged, in arrival order.
    var requests: [[String: Any]] {
        guard let text = try? String(contentsOf: log, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    /// The events it took (answered 2xx), each once, in the order it took them.
    var taken: [[String: Any]] {
        var seen = Set<String>()
        return requests.filter { ($0["status"] as? Int ?? 500) < 300 }.compactMap { $0["event"] as? [String: Any] }
            .filter { seen.insert($0["id"] as? String ?? "").inserted }
    }

    /// SIGKILL, and wait for it to be gone.
    func stop() async throws {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        let process = process
        try await BlockingWork.run { process.waitUntilExit() }
    }
}

struct ReceiverError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
