/// The byte transport under the WebSocket codec, driven on one event loop. Plain TCP
/// (`TCPStream`) implements it today; a TLS layer can implement it on top of another stream.
protocol ByteStream: AnyObject {
    /// Receives the stream's inbound bytes and lifecycle.
    var delegate: (any ByteStreamDelegate)? { get set }
    /// The loop that drives the stream.
    var loop: EventLoop { get }
    /// True once the stream is closed.
    var isClosed: Bool { get }
    /// Queues `frame` behind what is already queued, without writing yet.
    func enqueue(_ frame: OutboundFrame)
    /// Moves all of `frames` to the write queue, leaving `frames` empty with its capacity.
    func enqueue(contentsOf frames: inout [OutboundFrame])
    /// Writes as much as the peer accepts now, and the rest as soon as it can.
    func flush()
    /// Drops the queued frames not yet started on the wire, keeping one partly written so the
    /// stream stays valid; returns how many of their bytes were dropped.
    func dropUnstarted() -> Int
    /// Finishes writing what is queued, then half-closes the output (TCP FIN).
    func shutdownOutputAfterFlush()
    /// Closes now, dropping anything unwritten.
    func close()
}

/// Receives a `ByteStream`'s events on its loop thread.
protocol ByteStreamDelegate: AnyObject {
    /// Bytes arrived, in the stream's read buffer: valid only during the call, and the delegate's
    /// to change meanwhile (a WebSocket unmasks the frames it reads there).
    func streamRead(_ bytes: UnsafeMutableRawBufferPointer)
    /// `byteCount` queued bytes reached the kernel.
    func streamWrote(byteCount: Int)
    /// The stream closed (peer EOF, error or `close`); called once.
    func streamClosed()
}

extension Array where Element == OutboundFrame {
    /// Appends `frames`, each `trimmed()`: for frames that will wait behind unsent ones. (Frames
    /// written at once keep their batches: those are freed as soon as they are written.)
    mutating func appendTrimmed(_ frames: [OutboundFrame]) {
        reserveCapacity(count + frames.count)
        for frame in frames { append(frame.trimmed()) }
    }
}
