import Synchronization

/// Whether a client or subscriber has a logged-in connection, readable from any thread (for a
/// readiness check) while its loop changes it.
final class LinkStatus: Sendable {
    private let connected = Atomic<Bool>(false)

    /// True while a logged-in connection is up.
    var isConnected: Bool { connected.load(ordering: .acquiring) }

    /// Records a change.
    func set(connected: Bool) { self.connected.store(connected, ordering: .releasing) }
}
