/// Who takes part in a traffic run: the clients that send (each with a `Publisher`), the clients
/// that receive, what each does once logged in, and what the run checks after draining.
struct Topology {
    /// What a client does after logging in (subscribe, join …).
    typealias SetUp = @Sendable (BenchClient) async throws -> Void

    /// What a check after the run found: deliveries rightly not made, what it counts as lost,
    /// and fields for the output line.
    struct Verification {
        var notDue = 0
        var lost = 0
        var fields = JSONLine()
    }

    var publishers: [BenchClient] = []
    /// What each publisher does after logging in, before it sends.
    var publisherSetUp: SetUp?
    var subscribers: [(client: BenchClient, setUp: SetUp?)] = []
    /// Deliveries each accepted request makes.
    var receiversPerPublish = 0
    /// Runs after every request is answered and every delivery drained.
    var verify: (@Sendable () async -> Verification)?

    /// A subscriber set-up that subscribes to message channel `channel` for messages.
    static func subscribing(to channel: String) -> SetUp {
        { try await $0.subscribe(channel) }
    }
}
