import Synchronization
import SwitchboardBench
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// Sends stamped publishes on one connection and counts their answers. Free-running, it keeps
/// `window` publishes unanswered, sending the next from the loop thread as each answer arrives;
/// paced, a `Pacer` calls `send()` on schedule.
final class Publisher: Sendable {
    /// Publish request ids start here, apart from set-up requests.
    static let firstId: UInt32 = 0x8000_0000

    let channelType: RtmChannelType
    let channel: String
    let payloadSize: Int
    let window: Int
    let freeRunning: Bool

    private let connection = Mutex<WebSocketConnection?>(nil)
    private let nextId = Atomic<UInt32>(firstId)
    private let running = Atomic<Bool>(false)
    private let unanswered = Atomic<Int>(0)
    private let acceptedCount = Atomic<Int>(0)
    private let refusedCount = Atomic<Int>(0)

    init(channelType: RtmChannelType, channel: String, payloadSize: Int, window: Int, freeRunning: Bool) {
        self.channelType = channelType
        self.channel = channel
        self.payloadSize = payloadSize
        self.window = window
        self.freeRunning = freeRunning
    }

    func attach(_ socket: WebSocketConnection) { connection.withLock { $0 = socket } }

    /// Publishes answered `ok`.
    var accepted: Int { acceptedCount.load(ordering: .relaxed) }
    /// Publishes answered with an error (a limit refused them).
    var refused: Int { refusedCount.load(ordering: .relaxed) }
    /// Publishes not answered yet.
    var inFlight: Int { unanswered.load(ordering: .relaxed) }

    /// Starts publishing; free-running, fills the window.
    func start() {
        running.store(true, ordering: .relaxed)
        if freeRunning { for _ in 0..<window { send() } }
    }

    /// Stops sending; answers still count.
    func stop() { running.store(false, ordering: .relaxed) }

    /// Sends one publish stamped now.
    func send() {
        guard let socket = connection.withLock({ $0 }) else { return }
        let id = nextId.wrappingAdd(1, ordering: .relaxed).oldValue
        let body = PayloadStamp.make(size: payloadSize, timestamp: MonotonicClock.now())
        let frame = ClientFrame(
            id: id, .channel(.publish(channelType: channelType, channel: channel, message: .binary(body), customType: "")))
        unanswered.wrappingAdd(1, ordering: .relaxed)
        if !socket.sendBinary(frame.encode()) { unanswered.wrappingSubtract(1, ordering: .relaxed) }
    }

    /// An answer to a publish arrived (on the loop thread).
    func answered(accepted: Bool) {
        if accepted {
            acceptedCount.wrappingAdd(1, ordering: .relaxed)
        } else {
            refusedCount.wrappingAdd(1, ordering: .relaxed)
        }
        unanswered.wrappingSubtract(1, ordering: .relaxed)
        if freeRunning && running.load(ordering: .relaxed) { send() }
    }
}
