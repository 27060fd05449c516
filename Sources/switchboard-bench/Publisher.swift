import Synchronization
import SwitchboardBench
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

/// Sends a stream of stamped requests on one connection (publishes, topic messages, metadata
/// writes or reads) and counts their answers. Free-running, it keeps `window` requests
/// unanswered, sending the next from the loop thread as each answer arrives; paced, a `Pacer`
/// calls `send()` on schedule.
final class Publisher: AnswerSink {
    /// Request ids start here, apart from set-up requests.
    static let firstId: UInt32 = 0x8000_0000

    /// The request numbered `sequence` (0, 1, …), sent at `now` (`MonotonicClock`).
    typealias Request = @Sendable (_ sequence: UInt64, _ now: UInt64) -> ClientOperation
    /// Whether an `ok` answer (its frame's bytes) says what it should; a false one counts as wrong.
    typealias Check = @Sendable (_ answer: [UInt8]) -> Bool

    let window: Int
    let freeRunning: Bool
    private let request: Request
    private let check: Check?
    /// The request encoded once, for a request that differs only in its id and stamp (a
    /// publish): written again with those for each send instead of encoded.
    private let template: StampedFrameTemplate?

    private let connection = Mutex<WebSocketConnection?>(nil)
    private let nextId = Atomic<UInt32>(firstId)
    private let running = Atomic<Bool>(false)
    private let unanswered = Atomic<Int>(0)
    private let acceptedCount = Atomic<Int>(0)
    private let refusedCount = Atomic<Int>(0)
    private let wrongCount = Atomic<Int>(0)
    /// Whether answer latencies are recorded.
    private let recordsLatency: Bool
    /// Send times by request, for answer latencies.
    private let answerTimes: Mutex<AnswerTimes>

    /// Sends `request`s, `window` at a time when `freeRunning`; with `answerLatency`, records the
    /// time from each request to its answer (at most `window` unanswered at once).
    /// `stampedTemplate`: the requests differ only in their ids and stamps, so the first is
    /// encoded once and written again for the others (`StampedFrameTemplate`).
    init(
        window: Int, freeRunning: Bool, answerLatency: Bool = false, check: Check? = nil, stampedTemplate: Bool = false,
        request: @escaping Request
    ) {
        self.window = window
        self.freeRunning = freeRunning
        self.request = request
        self.check = check
        if stampedTemplate {
            let marker: UInt64 = 0x5A17_C0DE_5A17_C0DE
            let frame = ClientFrame(id: Self.firstId, request(0, marker)).encode()
            template = StampedFrameTemplate(frame: frame, id: Self.firstId, stamp: marker)
        } else {
            template = nil
        }
        recordsLatency = answerLatency
        answerTimes = Mutex(AnswerTimes(capacity: answerLatency ? window : 1))
    }

    /// Publishes stamped `payloadSize`-byte bodies on `channel`.
    convenience init(channelType: RtmChannelType, channel: String, payloadSize: Int, window: Int, freeRunning: Bool) {
        self.init(window: window, freeRunning: freeRunning, stampedTemplate: true) { _, now in
            .channel(
                .publish(
                    channelType: channelType, channel: channel, message: .binary(PayloadStamp.make(size: payloadSize, timestamp: now)),
                    customType: ""))
        }
    }

    func attach(_ socket: WebSocketConnection) { connection.withLock { $0 = socket } }

    /// Requests answered `ok`.
    var accepted: Int { acceptedCount.load(ordering: .relaxed) }
    /// Requests answered with an error (a limit refused them).
    var refused: Int { refusedCount.load(ordering: .relaxed) }
    /// Requests answered `ok` whose answer failed the check.
    var wrong: Int { wrongCount.load(ordering: .relaxed) }
    /// Requests not answered yet.
    var inFlight: Int { unanswered.load(ordering: .relaxed) }
    /// Request-to-answer latencies recorded while measuring.
    var answerLatencies: LatencyHistogram? { recordsLatency ? answerTimes.withLock { $0.histogram } : nil }

    /// Starts sending; free-running, fills the window.
    func start() {
        running.store(true, ordering: .relaxed)
        if freeRunning { for _ in 0..<window { send() } }
    }

    /// Stops sending; answers still count.
    func stop() { running.store(false, ordering: .relaxed) }

    /// Sends the next request, stamped now.
    func send() {
        guard let socket = connection.withLock({ $0 }) else { return }
        let id = nextId.wrappingAdd(1, ordering: .relaxed).oldValue
        let now = MonotonicClock.now()
        if recordsLatency { answerTimes.withLock { $0.sent(id, at: now) } }
        unanswered.wrappingAdd(1, ordering: .relaxed)
        let sent: Bool
        // Ids from `firstId` (2^31) up are written as the template's are; wrapped past 2^32, not.
        if let template, id >= Self.firstId {
            sent = withUnsafeTemporaryAllocation(byteCount: template.count, alignment: 8) { buffer in
                template.write(id: id, stamp: now, into: buffer)
                return socket.sendBinary(UnsafeRawBufferPointer(buffer))
            }
        } else {
            sent = socket.sendBinary(ClientFrame(id: id, request(UInt64(id &- Self.firstId), now)).encode())
        }
        if !sent { unanswered.wrappingSubtract(1, ordering: .relaxed) }
    }

    /// The answer to request `id` arrived (on the loop thread), `ok` or not.
    func answered(_ id: UInt32, accepted: Bool, bytes: UnsafeRawBufferPointer, measuring: Bool) {
        if recordsLatency {
            let now = MonotonicClock.now()
            answerTimes.withLock { $0.answered(id, at: now, measuring: measuring) }
        }
        if accepted {
            acceptedCount.wrappingAdd(1, ordering: .relaxed)
            if let check, !check(Array(bytes)) { wrongCount.wrappingAdd(1, ordering: .relaxed) }
        } else {
            refusedCount.wrappingAdd(1, ordering: .relaxed)
        }
        unanswered.wrappingSubtract(1, ordering: .relaxed)
        if freeRunning && running.load(ordering: .relaxed) { send() }
    }
}

/// Send times of the requests in flight, in a ring indexed by request id: with at most
/// `capacity` unanswered, a slot is answered before it is reused.
private struct AnswerTimes {
    private var sentAt: [UInt64]
    private let mask: UInt32
    var histogram = LatencyHistogram()

    init(capacity: Int) {
        var size = 1
        while size < capacity { size <<= 1 }
        sentAt = Array(repeating: 0, count: size)
        mask = UInt32(size - 1)
    }

    mutating func sent(_ id: UInt32, at now: UInt64) { sentAt[Int(id & mask)] = now }

    mutating func answered(_ id: UInt32, at now: UInt64, measuring: Bool) {
        if measuring { histogram.record(now &- sentAt[Int(id & mask)]) }
    }
}
