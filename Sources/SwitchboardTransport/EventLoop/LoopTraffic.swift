import Synchronization

/// The bytes one loop's sockets received and sent. Only the loop's thread adds, so an addition
/// is a relaxed load and store (no locked instruction); any thread may read.
public final class LoopTraffic: Sendable {
    private let receivedBytes = Atomic<UInt64>(0)
    private let sentBytes = Atomic<UInt64>(0)

    init() {}

    /// Bytes read from this loop's sockets.
    public var received: UInt64 { receivedBytes.load(ordering: .relaxed) }
    /// Bytes written to this loop's sockets.
    public var sent: UInt64 { sentBytes.load(ordering: .relaxed) }

    /// Counts `count` bytes read. Loop thread only.
    @inline(__always)
    func didReceive(_ count: Int) {
        receivedBytes.store(receivedBytes.load(ordering: .relaxed) &+ UInt64(count), ordering: .relaxed)
    }

    /// Counts `count` bytes written. Loop thread only.
    @inline(__always)
    func didSend(_ count: Int) {
        sentBytes.store(sentBytes.load(ordering: .relaxed) &+ UInt64(count), ordering: .relaxed)
    }
}

extension EventLoopGroup {
    /// Bytes read from every loop's sockets since the group started.
    public var bytesReceived: UInt64 { loops.reduce(0) { $0 &+ $1.traffic.received } }
    /// Bytes written to every loop's sockets since the group started.
    public var bytesSent: UInt64 { loops.reduce(0) { $0 &+ $1.traffic.sent } }
}
