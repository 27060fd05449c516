import SwitchboardCryptography

/// A TLS connection over a `TCPStream`, driven on the same loop: ciphertext from the socket is
/// fed to a `TLSSession` and the plaintext handed to the delegate; queued frames are encrypted
/// once the handshake is done and the records queued to the socket.
///
/// Write progress is reported in plaintext bytes (a frame counts once all of its ciphertext has
/// reached the kernel), so the connection's outbound accounting works as over plain TCP.
///
/// Frames are encrypted only while less than `encryptAhead` bytes of ciphertext wait for the
/// socket: a record cannot be left out without breaking every record after it, so frames kept as
/// plaintext are the ones that can still be dropped (a slow consumer's, say).
///
/// Loop only, like the `TCPStream` under it: the `TLSSession` (an OpenSSL `SSL`, which must not
/// be shared between threads) is created on the loop and used by nothing else.
final class TLSStream: ByteStream, ByteStreamDelegate {
    private let inner: TCPStream
    private let session: TLSSession
    var delegate: (any ByteStreamDelegate)?
    private(set) var isClosed = false
    /// Why the session failed, when it did; set before the delegate hears `streamClosed`.
    private(set) var failure: TLSError?
    /// Frames queued before the handshake finished, or since the last flush.
    private var waiting: [OutboundFrame] = []
    /// Ciphertext queued to the socket, oldest first, with the plaintext bytes it carries.
    private var inFlight: [(cipher: Int, plain: Int)] = []
    private var shutdownRequested = false
    private var closeNotifySent = false

    var loop: EventLoop { inner.loop }
    /// The errno of the socket read or write that ended the stream, if one did.
    var ioError: Int32? { inner.ioError }

    /// Most ciphertext queued to the socket ahead of what it has written.
    static let encryptAhead = 64 * 1024

    /// Wraps the connected `inner` (taking over its delegate); call `start()` next.
    init(inner: TCPStream, session: TLSSession) {
        self.inner = inner
        self.session = session
        inner.delegate = self
    }

    /// Starts the handshake: a client sends its hello, a server waits for one.
    func start() {
        advanceHandshake()
    }

    func enqueue(_ frame: OutboundFrame) {
        guard !isClosed && !shutdownRequested else { return }
        waiting.append(frame)
    }

    func enqueue(contentsOf frames: inout [OutboundFrame]) {
        if !isClosed && !shutdownRequested {
            // Behind frames still waiting to be encrypted, these wait too: in memory of about
            // their size (`OutboundFrame.trimmed`).
            if waiting.isEmpty { waiting.append(contentsOf: frames) } else { waiting.appendTrimmed(frames) }
        }
        frames.removeAll(keepingCapacity: true)
    }

    func flush() {
        guard !isClosed, session.isHandshakeComplete, !closeNotifySent, encryptWaiting() else { return }
        if shutdownRequested && waiting.isEmpty {
            queueCloseNotify()
            inner.shutdownOutputAfterFlush()
        } else {
            inner.flush()
        }
    }

    /// Encrypts waiting frames, oldest first, while the socket has room ahead; false when the
    /// session failed (the stream is then closing).
    private func encryptWaiting() -> Bool {
        var taken = 0
        var plain = 0
        do {
            while taken < waiting.count, inner.unsentByteCount + session.pendingCiphertextCount < Self.encryptAhead {
                try session.write(waiting[taken].encoded)
                plain += waiting[taken].count
                taken += 1
            }
        } catch {
            fail(error)
            return false
        }
        waiting.removeFirst(taken)
        queueCiphertext(carrying: plain)
        return true
    }

    private func queueCloseNotify() {
        closeNotifySent = true
        session.close()
        queueCiphertext(carrying: 0)
    }

    /// Drops the frames not yet encrypted. Records already encrypted are written in full: a TLS
    /// record cannot be left out without breaking every record after it.
    func dropUnstarted() -> Int {
        defer { waiting.removeAll() }
        return waiting.reduce(0) { $0 + $1.count }
    }

    func shutdownOutputAfterFlush() {
        guard !isClosed && !shutdownRequested else { return }
        shutdownRequested = true
        flush()
    }

    func close() {
        guard !isClosed else { return }
        if inner.isClosed { streamClosed() } else { inner.close() }
    }

    // MARK: The socket below

    func streamRead(_ bytes: UnsafeMutableRawBufferPointer) {
        guard !isClosed else { return }
        // Copied into the session here, so the loop's read buffer is free for plaintext below.
        session.feed(UnsafeRawBufferPointer(bytes))
        if !session.isHandshakeComplete {
            advanceHandshake()
            guard session.isHandshakeComplete, !isClosed else { return }
        }
        let buffer = loop.readBuffer
        while !isClosed {
            let result: TLSSession.ReadResult
            do {
                result = try session.read(into: buffer)
            } catch {
                fail(error)
                return
            }
            switch result {
            case .bytes(let count):
                delegate?.streamRead(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
            case .needMoreInput:
                // Reading can produce records to send (key updates).
                if session.pendingCiphertextCount > 0 {
                    queueCiphertext(carrying: 0)
                    inner.flush()
                }
                return
            case .closed:
                close()
                return
            }
        }
    }

    func streamWrote(byteCount: Int) {
        var left = byteCount
        var plain = 0
        while left > 0, !inFlight.isEmpty {
            if left >= inFlight[0].cipher {
                left -= inFlight[0].cipher
                plain += inFlight.removeFirst().plain
            } else {
                inFlight[0].cipher -= left
                left = 0
            }
        }
        if plain > 0 { delegate?.streamWrote(byteCount: plain) }
        // The socket is writing: keep it fed. It writes what is queued here before it returns.
        guard !isClosed, !waiting.isEmpty, session.isHandshakeComplete, !closeNotifySent, encryptWaiting() else { return }
        if shutdownRequested && waiting.isEmpty {
            queueCloseNotify()
            inner.shutdownOutputWhenFlushed()
        }
    }

    func streamClosed() {
        guard !isClosed else { return }
        isClosed = true
        waiting.removeAll()
        inFlight.removeAll()
        let delegate = self.delegate
        self.delegate = nil
        delegate?.streamClosed()
    }

    // MARK: Internals

    private func advanceHandshake() {
        let complete: Bool
        do {
            complete = try session.handshake()
        } catch {
            fail(error)
            return
        }
        queueCiphertext(carrying: 0)
        inner.flush()
        if complete && !isClosed { flush() }
    }

    /// Moves the session's pending ciphertext to the socket's queue, remembering how many
    /// plaintext bytes it carries.
    private func queueCiphertext(carrying plain: Int) {
        let cipher = session.takeCiphertext()
        guard !cipher.isEmpty else { return }
        inFlight.append((cipher.count, plain))
        inner.enqueue(.raw(cipher))
    }

    /// Sends what the session has left (an alert telling the peer why), then closes.
    private func fail(_ error: TLSError) {
        guard !isClosed else { return }
        failure = error
        waiting.removeAll()
        let alert = session.takeCiphertext()
        inner.abort(lastFrame: alert.isEmpty || inner.hasPendingWrites ? nil : .raw(alert))
    }
}
