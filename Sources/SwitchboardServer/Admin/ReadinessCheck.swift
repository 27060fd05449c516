/// One thing a node needs before it should take traffic (its client port, later Redis and the
/// pub/sub link), asked on every `/health/ready` probe.
public protocol ReadinessCheck: Sendable {
    /// The name the readiness report gives it ("listener", "redis" …).
    var name: String { get }
    /// Whether it is ready now. A check that takes longer than the probe's time limit counts
    /// as not ready.
    func check() async -> ReadinessCheckResult
}

/// The answer of a `ReadinessCheck`.
public enum ReadinessCheckResult: Sendable, Equatable {
    /// Ready.
    case ready
    /// Not ready, and why.
    case notReady(String)
}

/// A readiness check made of a name and a closure.
public struct ReadinessProbe: ReadinessCheck {
    /// The name the readiness report gives it.
    public let name: String
    private let body: @Sendable () async -> ReadinessCheckResult

    /// A check named `name` that runs `body`.
    public init(_ name: String, _ body: @escaping @Sendable () async -> ReadinessCheckResult) {
        self.name = name
        self.body = body
    }

    public func check() async -> ReadinessCheckResult { await body() }
}
