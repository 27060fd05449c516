import Foundation
import SwitchboardCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One `URLSessionWebSocketTask` and the delegate of its session: turns the task's callbacks
/// into the inbox's items and its sends into a bounded queue.
final class URLSessionSocket: NSObject, ClientSocket, URLSessionWebSocketDelegate {
    private typealias Opening = CheckedContinuation<Result<Void, TransportFailure>, Never>

    private enum Phase {
        case idle
        case opening(Opening)
        case open
        /// `close()` was called while sends were queued: the close frame follows the last one.
        case closing
        case closed
    }

    private struct State {
        var phase = Phase.idle
        var session: URLSession?
        var task: URLSessionWebSocketTask?
        var queuedBytes = 0
        /// Why the server's certificate was refused in the trust challenge, when it was.
        var refusal: String?
    }

    /// How long `close()` waits for queued sends before closing anyway.
    static let flushPatience: TimeInterval = 2

    let options: URLSessionTransport.Options
    private let inbox: SocketInbox
    private let subprotocol: String
    // URLSession and its tasks are thread-safe: they are kept here only to be found again.
    private let state = Locked(State())
    private let forget: @Sendable (URLSessionSocket) -> Void

    /// A socket whose messages go to `inbox`; `forget` runs once when it closes.
    init(
        inbox: SocketInbox, subprotocol: String, options: URLSessionTransport.Options,
        forget: @escaping @Sendable (URLSessionSocket) -> Void
    ) {
        self.inbox = inbox
        self.subprotocol = subprotocol
        self.options = options
        self.forget = forget
    }

    /// Starts `task` and returns once its handshake is done; throws when it fails or takes
    /// longer than `timeout`.
    func open(session: URLSession, task: URLSessionWebSocketTask, timeout: PortableDuration) async throws(TransportFailure) {
        let result = await withCheckedContinuation { (continuation: Opening) in
            state.withLock { state in
                state.session = session
                state.task = task
                state.phase = .opening(continuation)
            }
            task.resume()
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in
                self?.finish(TransportFailure(kind: .failed, reason: "timed out after \(timeout)"), onlyOpening: true)
            }
        }
        try result.get()
    }

    func send(_ bytes: [UInt8]) -> Bool {
        let task: URLSessionWebSocketTask? = state.withLock { state in
            guard case .open = state.phase, state.queuedBytes + bytes.count <= URLSessionTransport.maxQueuedBytes
            else { return nil }
            state.queuedBytes += bytes.count
            return state.task
        }
        guard let task else { return false }
        let count = bytes.count
        task.send(.data(Data(bytes))) { [weak self] error in self?.sent(count, error: error) }
        return true
    }

    func close() {
        let (phase, queued) = state.withLock { state in
            let now = (state.phase, state.queuedBytes)
            if case .open = state.phase, state.queuedBytes > 0 { state.phase = .closing }
            return now
        }
        switch phase {
        case .open where queued > 0:
            inbox.closed(reason: "closed by the client")
            // A peer that stops reading must not keep the socket: close anyway after a while.
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.flushPatience) { [weak self] in
                self?.finish(TransportFailure(kind: .failed, reason: "closed by the client"), onlyOpening: false)
            }
        case .open, .opening, .idle:
            finish(TransportFailure(kind: .failed, reason: "closed by the client"), onlyOpening: false)
        case .closing, .closed:
            break
        }
    }

    /// Notes that the server's certificate was refused, so the failure says so.
    func refuseCertificate(_ reason: String) {
        state.withLock { $0.refusal = reason }
    }

    private func sent(_ count: Int, error: (any Error)?) {
        let flushedWhileClosing = state.withLock { state in
            state.queuedBytes -= count
            guard case .closing = state.phase else { return false }
            return state.queuedBytes == 0
        }
        if let error {
            finish(failure(error), onlyOpening: false)
        } else if flushedWhileClosing {
            finish(TransportFailure(kind: .failed, reason: "closed by the client"), onlyOpening: false)
        }
    }

    /// Ends the socket once: a handshake under way fails with `failure`, an open socket tells its
    /// inbox; the task is closed and the session let go. With `onlyOpening`, an open socket stays.
    private func finish(_ failure: TransportFailure, onlyOpening: Bool) {
        let ended: (phase: Phase, session: URLSession?, task: URLSessionWebSocketTask?)? = state.withLock { state in
            switch state.phase {
            case .closed: return nil
            case .open, .closing, .idle: if onlyOpening { return nil }
            case .opening: break
            }
            defer {
                state.phase = .closed
                state.session = nil
                state.task = nil
            }
            return (state.phase, state.session, state.task)
        }
        guard let ended else { return }
        ended.task?.cancel(with: .normalClosure, reason: nil)
        ended.session?.invalidateAndCancel()
        switch ended.phase {
        case .opening(let continuation): continuation.resume(returning: .failure(failure))
        case .open: inbox.closed(reason: failure.reason)
        case .idle, .closing, .closed: break
        }
        forget(self)
    }

    private func receiveNext(_ task: URLSessionWebSocketTask) {
        task.receive { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let message):
                // The server sends binary messages only; anything else is skipped.
                if case .data(let data) = message { inbox.received([UInt8](data)) }
                receiveNext(task)
            case .failure(let error):
                finish(failure(error), onlyOpening: false)
            }
        }
    }

    /// A certificate refusal (ours in the trust challenge, or the system's) or anything else.
    private func failure(_ error: (any Error)?) -> TransportFailure {
        if let refusal = state.withLock({ $0.refusal }) {
            return TransportFailure(kind: .certificateRefused, reason: refusal)
        }
        guard let error else { return TransportFailure(kind: .failed, reason: "the connection closed") }
        let failure = error as NSError
        if failure.domain == NSURLErrorDomain, Self.certificateErrors.contains(failure.code) {
            return TransportFailure(kind: .certificateRefused, reason: failure.localizedDescription)
        }
        return TransportFailure(kind: .failed, reason: failure.localizedDescription)
    }

    private static let certificateErrors: Set<Int> = [
        NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasBadDate,
        NSURLErrorServerCertificateNotYetValid, NSURLErrorServerCertificateHasUnknownRoot,
    ]

    // MARK: URLSessionWebSocketDelegate

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol chosen: String?
    ) {
        guard chosen == subprotocol else {
            let reason = "the server chose subprotocol \(chosen ?? "none"), not \(subprotocol)"
            return finish(TransportFailure(kind: .failed, reason: reason), onlyOpening: false)
        }
        let opening: Opening? = state.withLock { state in
            guard case .opening(let continuation) = state.phase else { return nil }
            state.phase = .open
            return continuation
        }
        guard let opening else { return }
        opening.resume(returning: .success(()))
        receiveNext(webSocketTask)
    }

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask,
        didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?
    ) {
        finish(TransportFailure(kind: .failed, reason: "closed by the server (\(closeCode.rawValue))"), onlyOpening: false)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        finish(failure(error), onlyOpening: false)
    }
}
