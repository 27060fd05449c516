import SwitchboardCore
import SwitchboardWire

/// The requests sent on the connection and not yet answered, each with its deadline and who
/// waits for its answer. Pure bookkeeping: the engine sweeps expired deadlines with one timer.
struct PendingRequests<Waiter: Sendable>: Sendable {
    private struct Entry: Sendable {
        let operation: String
        let timeoutCode: RtmErrorCode
        let lostCode: RtmErrorCode
        let deadline: PortableDuration
        let waiter: Waiter
    }

    private var entries: [UInt32: Entry] = [:]
    private var lastId: UInt32 = 0

    /// Whether nothing waits.
    var isEmpty: Bool { entries.isEmpty }

    /// How many wait.
    var count: Int { entries.count }

    /// The earliest deadline of a waiting request.
    var earliestDeadline: PortableDuration? { entries.values.lazy.map(\.deadline).min() }

    /// Registers a request and returns its id (never 0, which the server uses for frames it could
    /// not read, and never one still waiting).
    mutating func add(_ operation: ClientOperation, deadline: PortableDuration, waiter: Waiter) -> UInt32 {
        repeat { lastId &+= 1 } while lastId == 0 || entries[lastId] != nil
        entries[lastId] = Entry(
            operation: operation.name, timeoutCode: Self.timeoutCode(for: operation), lostCode: Self.lostCode(for: operation),
            deadline: deadline, waiter: waiter)
        return lastId
    }

    /// Takes the request an answer (or error) with `id` belongs to, with who waits for it.
    mutating func take(_ id: UInt32) -> (operation: String, waiter: Waiter)? {
        entries.removeValue(forKey: id).map { ($0.operation, $0.waiter) }
    }

    /// Takes every request whose deadline is at or before `now`, oldest first.
    mutating func takeExpired(now: PortableDuration) -> [(operation: String, timeoutCode: RtmErrorCode, waiter: Waiter)] {
        let expired = entries.filter { $0.value.deadline <= now }
        for id in expired.keys { entries[id] = nil }
        return expired.sorted { $0.key < $1.key }.map { ($0.value.operation, $0.value.timeoutCode, $0.value.waiter) }
    }

    /// Takes every request, oldest first, with the code of a request lost with its connection.
    mutating func takeAll() -> [(operation: String, lostCode: RtmErrorCode, waiter: Waiter)] {
        defer { entries.removeAll() }
        return entries.sorted { $0.key < $1.key }.map { ($0.value.operation, $0.value.lostCode, $0.value.waiter) }
    }

    /// The reference's code for a request whose connection closed before its answer came: the
    /// channel calls' own failures ("check for broken connections"), `notConnected` for the rest
    /// (a login's, which the link machine reads as "try again", among them).
    static func lostCode(for operation: ClientOperation) -> RtmErrorCode {
        switch operation {
        case .channel(.subscribe): .channelSubscribeFailed
        case .channel(.unsubscribe): .channelUnsubscribeFailed
        case .channel(.publish), .stream(.publishTopicMessage): .channelPublishMessageFailed
        case .stream(.join): .channelJoinFailed
        case .stream(.leave): .channelLeaveFailed
        case .stream(.joinTopic): .channelJoinTopicFailed
        case .presence: .presenceNotConnected
        default: .notConnected
        }
    }

    /// The reference's timeout code for an operation: by feature, and within the session and
    /// channel features by operation.
    static func timeoutCode(for operation: ClientOperation) -> RtmErrorCode {
        switch operation {
        case .session(.login): .loginTimeout
        case .session(.renewToken): .renewTokenTimeout
        case .session: .notConnected
        case .channel(.subscribe): .channelSubscribeTimeout
        case .channel(.unsubscribe): .channelUnsubscribeFailed
        case .channel(.publish): .channelPublishMessageTimeout
        case .extension: .notConnected
        case .stream(.join): .channelJoinFailed
        case .stream(.leave): .channelLeaveFailed
        case .stream(.publishTopicMessage): .channelPublishMessageTimeout
        case .stream(.subscribeTopic): .channelSubscribeTimeout
        case .stream(.renewChannelToken): .renewTokenTimeout
        case .stream: .notConnected
        case .presence: .presenceOperationTimeout
        case .storage: .storageOperationTimeout
        case .lock: .lockOperationTimeout
        }
    }
}
