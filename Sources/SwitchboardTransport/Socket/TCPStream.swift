import CLinux
import Glibc

/// A connected non-blocking TCP socket registered with an event loop: reads on readiness, and
/// writes queued frames with one vectored `sendmsg`, waiting for `EPOLLOUT` on partial writes.
final class TCPStream: ByteStream, Selectable {
    let loop: EventLoop
    let fd: Int32
    var delegate: (any ByteStreamDelegate)?
    private(set) var isClosed = false
    private var pending: [OutboundFrame] = []
    private var head = 0
    private var headOffset = 0
    private var watchingWritable = false
    private var shutdownWhenFlushed = false
    private var outputShutdown = false
    /// Bytes queued and not yet handed to the kernel.
    private(set) var unsentByteCount = 0
    /// The errno of the read or write that ended the stream (a reset, say); nil when the peer
    /// closed it, or this side did.
    private(set) var ioError: Int32?

    private static let readable = EPOLLIN.rawValue
    private static let readableAndWritable = EPOLLIN.rawValue | EPOLLOUT.rawValue

    /// Registers the connected socket `fd` with `loop`; on failure the fd is closed.
    init(fd: Int32, loop: EventLoop) throws(SocketError) {
        self.fd = fd
        self.loop = loop
        do {
            try loop.register(fd, events: Self.readable, handler: self)
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    var hasPendingWrites: Bool { head < pending.count }

    /// The frames not yet fully written, oldest first.
    var unsentFrames: ArraySlice<OutboundFrame> { pending[head...] }

    func enqueue(_ frame: OutboundFrame) {
        guard !isClosed && !outputShutdown else { return }
        pending.append(frame)
        unsentByteCount += frame.count
    }

    func enqueue(contentsOf frames: inout [OutboundFrame]) {
        if !isClosed && !outputShutdown {
            unsentByteCount += frames.reduce(0) { $0 + $1.count }
            if head == pending.count {
                // Nothing unsent: take the array itself (no copy, no reference counting per frame)
                // and hand back this stream's empty one with its capacity.
                pending.removeAll(keepingCapacity: true)
                head = 0
                headOffset = 0
                swap(&pending, &frames)
                return
            }
            // Behind unsent bytes: these wait for the peer, each in memory of about its size.
            pending.appendTrimmed(frames)
        }
        frames.removeAll(keepingCapacity: true)
    }

    func handleEvents(_ events: UInt32) {
        if events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { readAvailable() }
        if !isClosed && events & EPOLLOUT.rawValue != 0 { flush() }
    }

    func loopShuttingDown() { close() }

    private func readAvailable() {
        let buffer = loop.readBuffer
        for _ in 0..<4 {
            let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if count > 0 {
                loop.traffic.didReceive(count)
                delegate?.streamRead(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
                if isClosed || count < buffer.count { return }
                continue
            }
            if count == 0 {
                close()
                return
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return
            default:
                fail(errno)
                return
            }
        }
    }

    func flush() {
        guard !isClosed && !outputShutdown else { return }
        let iovecs = loop.local.iovecs
        while head < pending.count {
            var count = 0
            var index = head
            while index < pending.count && count < iovecs.count {
                let bytes = pending[index].encoded
                let skip = index == head ? headOffset : 0
                iovecs[count] = iovec(
                    iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress! + skip),
                    iov_len: bytes.count - skip)
                count += 1
                index += 1
            }
            // sendmsg is writev with MSG_NOSIGNAL: a vanished peer must not raise SIGPIPE.
            var message = msghdr()
            message.msg_iov = iovecs.baseAddress
            message.msg_iovlen = count
            let written = sendmsg(fd, &message, Int32(MSG_NOSIGNAL))
            if written < 0 {
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK:
                    watchWritable(true)
                    return
                default:
                    fail(errno)
                    return
                }
            }
            advance(by: written)
            loop.traffic.didSend(written)
            delegate?.streamWrote(byteCount: written)
            if isClosed { return }
        }
        pending.removeAll(keepingCapacity: true)
        head = 0
        headOffset = 0
        watchWritable(false)
        if shutdownWhenFlushed {
            outputShutdown = true
            shutdown(fd, Int32(SHUT_WR))
        }
    }

    private func advance(by written: Int) {
        unsentByteCount -= written
        var left = written
        while left > 0 {
            let remaining = pending[head].count - headOffset
            if left >= remaining {
                left -= remaining
                head += 1
                headOffset = 0
            } else {
                headOffset += left
                left = 0
            }
        }
        if head >= 32 && head * 2 >= pending.count {
            pending.removeFirst(head)
            head = 0
        }
    }

    private func watchWritable(_ watch: Bool) {
        guard watch != watchingWritable, !isClosed else { return }
        watchingWritable = watch
        loop.reregister(fd, events: watch ? Self.readableAndWritable : Self.readable)
    }

    func dropUnstarted() -> Int {
        let keep = headOffset > 0 ? head + 1 : head
        guard keep < pending.count else { return 0 }
        let dropped = pending[keep...].reduce(0) { $0 + $1.count }
        pending.removeSubrange(keep...)
        unsentByteCount -= dropped
        return dropped
    }

    /// Half-closes the output once what is queued is written, without writing now: for a
    /// delegate that queues its last bytes while hearing about a write.
    func shutdownOutputWhenFlushed() {
        guard !isClosed && !outputShutdown else { return }
        shutdownWhenFlushed = true
    }

    func shutdownOutputAfterFlush() {
        guard !isClosed && !outputShutdown else { return }
        shutdownWhenFlushed = true
        flush()
    }

    /// Drops what is queued, tries once to write `lastFrame` if nothing is half-written, then
    /// closes.
    func abort(lastFrame: OutboundFrame?) {
        guard !isClosed else { return }
        if let lastFrame, !outputShutdown, headOffset == 0 {
            pending.removeAll()
            head = 0
            unsentByteCount = 0
            _ = Glibc.send(fd, lastFrame.encoded.baseAddress, lastFrame.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        }
        close()
    }

    /// Closes the stream after a read or write failed with `code`.
    private func fail(_ code: Int32) {
        if !isClosed { ioError = code }
        close()
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        loop.deregister(fd)
        Glibc.close(fd)
        pending.removeAll()
        head = 0
        unsentByteCount = 0
        let delegate = self.delegate
        self.delegate = nil
        delegate?.streamClosed()
    }
}
