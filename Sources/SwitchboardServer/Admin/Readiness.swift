import Synchronization
import SwitchboardCore

/// The checks that decide whether a node is ready for traffic: the server's own ("listener")
/// and any added later by an embedder or a cluster component ("redis", "pubsub"). Every check
/// runs on each probe, all at once, each within `timeout`.
public final class Readiness: Sendable {
    private let checks = Mutex<[any ReadinessCheck]>([])
    /// How long one check may take before it counts as not ready.
    public let timeout: Duration

    /// Readiness with no checks yet, each later check allowed `timeout`.
    public init(timeout: Duration = .seconds(2)) { self.timeout = timeout }

    /// Adds `check`, asked on every probe from now on.
    public func add(_ check: any ReadinessCheck) {
        checks.withLock { $0.append(check) }
    }

    /// The names of the checks, in the order they were added.
    public var checkNames: [String] { checks.withLock { $0.map(\.name) } }

    /// Runs every check and reports each one's result, in the order they were added.
    public func evaluate() async -> ReadinessReport {
        let checks = self.checks.withLock { $0 }
        let timeout = timeout
        let results = await withTaskGroup(of: (Int, ReadinessCheckResult).self) { group in
            for (index, check) in checks.enumerated() {
                group.addTask { (index, await Self.run(check, within: timeout)) }
            }
            var results = [ReadinessCheckResult](repeating: .ready, count: checks.count)
            for await (index, result) in group { results[index] = result }
            return results
        }
        return ReadinessReport(checks: zip(checks, results).map { ($0.name, $1) })
    }

    /// `check`'s answer, or not ready when it takes longer than `timeout`.
    private static func run(_ check: any ReadinessCheck, within timeout: Duration) async -> ReadinessCheckResult {
        await Deadline.answer(within: timeout) { await check.check() } ?? .notReady("no answer within \(timeout)")
    }
}

/// What one readiness probe found.
public struct ReadinessReport: Sendable {
    /// Every check's name and result, in the order they were added.
    public let checks: [(name: String, result: ReadinessCheckResult)]

    /// Ready when every check is.
    public var isReady: Bool { checks.allSatisfy { $0.result == .ready } }

    /// The report as JSON: `{"status":"ready"|"not ready","checks":{name:"ok"|reason}}`.
    public var json: String {
        let entries = checks.map { check -> String in
            let value: String
            switch check.result {
            case .ready: value = "ok"
            case .notReady(let reason): value = reason
            }
            return "\(JSONText.quoted(check.name)):\(JSONText.quoted(value))"
        }
        return "{\"status\":\(JSONText.quoted(isReady ? "ready" : "not ready")),\"checks\":{\(entries.joined(separator: ","))}}"
    }
}
