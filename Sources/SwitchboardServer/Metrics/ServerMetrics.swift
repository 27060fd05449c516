import Synchronization
import SwitchboardCore

/// The counters the server keeps about its own work, read by the `/metrics` scrape.
///
/// What happens per message (publishes, deliveries) is counted in `StripedCounter`s: a relaxed
/// atomic add on a slot of the calling thread's own, no lock and no allocation. What happens per
/// login, per request through the request loop or per refused connection is counted under a
/// lock: those paths already take locks, start tasks and hop actors.
final class ServerMetrics: Sendable {
    private struct RequestSeries {
        var succeeded: UInt64 = 0
        var failed: UInt64 = 0
        var latency = DurationHistogram()
    }

    private struct Tallies {
        var loginFailures: [RtmErrorCode: UInt64] = [:]
        var requests: [String: RequestSeries] = [:]
        var refusals: [RefusalReason: UInt64] = [:]
        var apiCalls: [APICall: UInt64] = [:]
    }

    /// A server API call's series: its method (one of the API's, or "unknown") and status.
    struct APICall: Hashable {
        let method: String
        let status: Int
    }

    /// Logins granted.
    let logins = StripedCounter()
    /// Publishes accepted, by channel type. Counters of their own, not an array of them: reaching
    /// a `let` of this object costs no reference count, an array element costs a retain and a
    /// release on every message.
    private let publishes = CountersByChannelType()
    /// Publishes answered at once on the event loop, accepted and refused (also counted by type
    /// in `publishes` when accepted).
    private let atOnceSucceeded = StripedCounter()
    private let atOnceFailed = StripedCounter()
    /// Message pushes handed to receiving sessions, by channel type.
    private let deliveries = CountersByChannelType()
    private let tallies = Mutex(Tallies())

    // MARK: Counting

    /// A publish to a channel of `type` was accepted (answered at once; a publish through the
    /// request loop is counted by `requestFinished` as well).
    @inline(__always)
    func published(_ type: RtmChannelType) {
        publishes.add(1, to: type)
    }

    /// A publish was answered at once, on the event loop.
    @inline(__always)
    func answeredAtOnce(succeeded: Bool) {
        if succeeded { atOnceSucceeded.add() } else { atOnceFailed.add() }
    }

    /// Publishes answered at once by the frames of one read (`ClientLink.ReadShare`): `accepted`
    /// by channel type, and `refused`.
    func answeredAtOnce(accepted: (message: UInt64, user: UInt64), refused: UInt64) {
        if accepted.message > 0 { publishes.add(accepted.message, to: .message) }
        if accepted.user > 0 { publishes.add(accepted.user, to: .user) }
        if accepted.message + accepted.user > 0 { atOnceSucceeded.add(accepted.message + accepted.user) }
        if refused > 0 { atOnceFailed.add(refused) }
    }

    /// A message push went to `receivers` sessions.
    @inline(__always)
    func delivered(_ type: RtmChannelType, receivers: Int) {
        deliveries.add(UInt64(receivers), to: type)
    }

    /// A login failed with `code`.
    func loginFailed(_ code: RtmErrorCode) {
        tallies.withLock { $0.loginFailures[code, default: 0] += 1 }
    }

    /// A request through the request loop was answered after `duration`.
    func requestFinished(_ operation: String, succeeded: Bool, after duration: Duration) {
        let label = Self.operationLabel(operation)
        tallies.withLock { tallies in
            tallies.requests[label, default: RequestSeries()].latency.observe(duration)
            if succeeded { tallies.requests[label]?.succeeded += 1 } else { tallies.requests[label]?.failed += 1 }
        }
    }

    /// A connection was refused or closed by policy.
    func refused(_ reason: RefusalReason) {
        tallies.withLock { $0.refusals[reason, default: 0] += 1 }
    }

    /// A server API call was answered with `status`.
    func apiCallAnswered(method: String, status: Int) {
        tallies.withLock { $0.apiCalls[APICall(method: method, status: status), default: 0] += 1 }
    }

    /// Extension operations are named by the client: one label for all of them keeps the number
    /// of series bounded whatever names clients send.
    private static func operationLabel(_ operation: String) -> String {
        operation.hasPrefix("x.") ? "extension" : operation
    }

    // MARK: Reading

    /// Publishes accepted per channel type.
    func publishCount(_ type: RtmChannelType) -> UInt64 { publishes.value(of: type) }

    /// Message pushes handed to sessions per channel type.
    func deliveryCount(_ type: RtmChannelType) -> UInt64 { deliveries.value(of: type) }

    /// Publishes answered at once, accepted and refused.
    var answeredAtOnce: (succeeded: UInt64, failed: UInt64) { (atOnceSucceeded.value, atOnceFailed.value) }

    /// Failed logins by error code.
    var loginFailures: [RtmErrorCode: UInt64] { tallies.withLock { $0.loginFailures } }

    /// Refusals by reason.
    var refusals: [RefusalReason: UInt64] { tallies.withLock { $0.refusals } }

    /// Server API calls answered, by method and status.
    var apiCalls: [APICall: UInt64] { tallies.withLock { $0.apiCalls } }

    /// Requests answered through the request loop, by operation: outcomes and latency.
    var requests: [(operation: String, succeeded: UInt64, failed: UInt64, latency: DurationHistogram.Snapshot)] {
        tallies.withLock { tallies in
            tallies.requests.sorted { $0.key < $1.key }.map { ($0.key, $0.value.succeeded, $0.value.failed, $0.value.latency.snapshot) }
        }
    }
}

/// One `StripedCounter` per channel type, each a stored property, so adding to one reaches it
/// without counting a reference.
final class CountersByChannelType: Sendable {
    private let none = StripedCounter()
    private let message = StripedCounter()
    private let stream = StripedCounter()
    private let user = StripedCounter()

    /// Adds `amount` to the counter of `type`.
    @inline(__always)
    func add(_ amount: UInt64, to type: RtmChannelType) {
        switch type {
        case .none: none.add(amount)
        case .message: message.add(amount)
        case .stream: stream.add(amount)
        case .user: user.add(amount)
        }
    }

    /// The count of `type`.
    func value(of type: RtmChannelType) -> UInt64 {
        switch type {
        case .none: none.value
        case .message: message.value
        case .stream: stream.value
        case .user: user.value
        }
    }
}
