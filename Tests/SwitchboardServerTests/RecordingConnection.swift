import Synchronization
import Testing
import SwitchboardTransport
import SwitchboardTestKit
import SwitchboardWire

@testable import SwitchboardServer

/// An in-memory connection under a `ClientLink`: keeps every frame the server sends it, to be read
/// as a client would decode it, and the close it was asked for. Like a socket, it sends nothing
/// once closed, and a second close changes nothing.
final class RecordingConnection: LinkConnection {
    /// The code and reason of the close the server asked for.
    struct Close: Equatable, Sendable {
        let code: WebSocketCloseCode
        let reason: String
    }

    private struct State {
        var sent: [[UInt8]] = []
        /// How many sends carried the frames in `sent` (one send may carry several).
        var sends = 0
        var close: Close?
    }

    static var batchedBinaryLimit: Int { WebSocketConnection.batchedBinaryLimit }
    let id: UInt64
    let remoteAddress: String
    let maxOutboundBytes = Int.max
    private let state = Mutex(State())

    /// A connection numbered `id`, from a made-up loopback address.
    init(id: UInt64) {
        self.id = id
        remoteAddress = "127.0.0.1:\(40_000 + id)"
    }

    var isOpen: Bool { state.withLock { $0.close == nil } }
    /// Every frame is taken at once: nothing waits unsent.
    var bufferedBytes: Int { 0 }

    func send(_ frame: OutboundFrame) -> Bool { frame.headerLength == 0 ? record(joined: frame) : record(frame.payload) }
    func sendCopy(of frame: OutboundFrame) -> Bool { record(frame.payload) }
    func sendBinary(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { record($0) } }
    func sendBinary(_ bytes: UnsafeRawBufferPointer) -> Bool { record(bytes) }
    func sendBinary(payloadCount: Int, write: (UnsafeMutableRawBufferPointer) -> Void) -> Bool {
        var payload = [UInt8](repeating: 0, count: payloadCount)
        payload.withUnsafeMutableBytes(write)
        return sendBinary(payload)
    }

    func close(code: WebSocketCloseCode, reason: String) {
        state.withLock { state in
            if state.close == nil { state.close = Close(code: code, reason: reason) }
        }
    }

    private func record(_ payload: UnsafeRawBufferPointer) -> Bool {
        state.withLock { state in
            guard state.close == nil else { return false }
            state.sent.append(Array(payload))
            state.sends += 1
            return true
        }
    }

    /// Records the payloads of a frame holding several frames' bytes (`OutboundFrame.joining`),
    /// read as a client reads them off the socket: one unmasked WebSocket frame after another.
    private func record(joined frame: OutboundFrame) -> Bool {
        let bytes = frame.bytes
        var payloads: [[UInt8]] = []
        var offset = 0
        while offset < bytes.count {
            let length7 = Int(bytes[offset + 1] & 0x7F)
            var start = offset + 2
            var length = length7
            if length7 == 126 {
                length = Int(bytes[start]) << 8 | Int(bytes[start + 1])
                start += 2
            } else if length7 == 127 {
                length = (0..<8).reduce(0) { $0 << 8 | Int(bytes[start + $1]) }
                start += 8
            }
            payloads.append(Array(bytes[start..<(start + length)]))
            offset = start + length
        }
        return state.withLock { state in
            guard state.close == nil else { return false }
            state.sent.append(contentsOf: payloads)
            state.sends += 1
            return true
        }
    }

    /// The close the server asked for, if any.
    var closed: Close? { state.withLock { $0.close } }

    /// Every frame's payload sent so far, as bytes.
    var sentBytes: [[UInt8]] { state.withLock { $0.sent } }

    /// How many sends the frames so far took (a frame of several frames' bytes is one).
    var sends: Int { state.withLock { $0.sends } }

    /// Every frame sent so far, decoded (a frame that does not decode fails the test).
    var frames: [ServerFrame] {
        state.withLock { $0.sent }.compactMap { bytes in
            do {
                return try ServerFrame.decode(bytes)
            } catch {
                Issue.record("the server sent a frame a client cannot decode: \(error)")
                return nil
            }
        }
    }

    /// The frames sent once there are at least `count`, or all of them when the standard patience
    /// of real time passes first.
    func frames(count: Int) async -> [ServerFrame] {
        _ = await eventually { state.withLock { $0.sent.count } >= count }
        return frames
    }

    /// The answer or error whose request id is `id`, waiting for it up to the standard patience.
    func answer(to id: UInt32) async -> ServerFrame? {
        _ = await eventually { frames.contains { $0.requestId == id } }
        return frames.first { $0.requestId == id }
    }

    /// The close, once the server has asked for one, or nil when the standard patience passes first.
    func awaitClose() async -> Close? {
        _ = await eventually { closed != nil }
        return closed
    }
}

