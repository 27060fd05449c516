import Synchronization
import SwitchboardCore

/// Where deliveries wait, so that they outlive the process: added before anything is sent,
/// removed once the receiver took them (or they were given up). A delivery removed late is sent
/// again after a restart: at least once, never lost.
public protocol WebhookQueue: Sendable {
    /// Opens the queue; returns what was waiting, in sequence order. Throws a failure whose
    /// description names the file.
    func open() async throws(WebhookQueueFailure) -> [QueuedDelivery]
    /// Adds `deliveries` and removes the deliveries numbered `removed`, in one durable step.
    func write(adding deliveries: [QueuedDelivery], removing removed: [Int64]) async throws(RtmError)
    /// Closes the queue once the writes under way are done.
    func close() async

    /// Deliveries that waited in another node's queue and were handed to this one (in cluster
    /// mode, a dead node's, taken over), oldest first; their sequences are the other queue's and
    /// mean nothing here. They stay until `keepAdopted` makes them this queue's own.
    func adopted() async throws(RtmError) -> [QueuedDelivery]
    /// Makes the first `deliveries.count` of `adopted()`, renumbered in this queue's sequence,
    /// this queue's own, in one durable step: a crash leaves them either adopted or kept.
    func keepAdopted(_ deliveries: [QueuedDelivery]) async throws(RtmError)
    /// Yields when `adopted()` has something new; nil for a queue nothing is ever handed to.
    var adoptions: AsyncStream<Void>? { get }
}

extension WebhookQueue {
    /// A queue of one node adopts nothing.
    public func adopted() async throws(RtmError) -> [QueuedDelivery] { [] }
    public func keepAdopted(_ deliveries: [QueuedDelivery]) async throws(RtmError) {}
    public var adoptions: AsyncStream<Void>? { nil }
}

/// Why the webhook queue could not open, naming its file.
public struct WebhookQueueFailure: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let message: String
    /// A failure for `message`.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A queue in memory only: gone with the process (tests, servers that need no durability).
public final class InMemoryWebhookQueue: WebhookQueue {
    private let waiting = Mutex<[Int64: QueuedDelivery]>([:])

    /// An empty queue.
    public init() {}

    public func open() async throws(WebhookQueueFailure) -> [QueuedDelivery] {
        waiting.withLock { $0.values.sorted { $0.sequence < $1.sequence } }
    }

    public func write(adding deliveries: [QueuedDelivery], removing removed: [Int64]) async throws(RtmError) {
        waiting.withLock { waiting in
            for delivery in deliveries { waiting[delivery.sequence] = delivery }
            for sequence in removed { waiting[sequence] = nil }
        }
    }

    public func close() async {}

    /// How many deliveries wait.
    public var count: Int { waiting.withLock { $0.count } }
}
