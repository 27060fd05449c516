import Synchronization
import SwitchboardCore
import SwitchboardWire

/// A command of the server API on a user's sessions as it travels to the nodes that hold them:
/// published on the user's channel (`["command", origin, id, app, user, kind, argument]`), where
/// exactly those nodes listen, so Redis's count of receivers is the number of answers to wait for.
struct UserCommandAnnouncement: Sendable, Hashable {
    /// The node that asked, where the answers go (its node channel).
    var origin: String
    /// The command's id, unique per asking node.
    var id: String
    var user: UserKey
    var command: UserCommand

    init(origin: String, id: String, user: UserKey, command: UserCommand) {
        self.origin = origin
        self.id = id
        self.user = user
        self.command = command
    }

    /// Reads an announcement; nil when `bytes` are not one.
    init?(decoding bytes: [UInt8]) {
        var reader = MessagePackReader(bytes)
        guard (try? reader.readArrayHeader()) == 7, (try? reader.readString()) == "command",
            let origin = try? reader.readString(), let id = try? reader.readString(), let app = try? reader.readString(),
            let userId = try? reader.readString(), let kind = try? reader.readInteger(Int.self), let argument = try? reader.readString(),
            reader.isAtEnd
        else { return nil }
        switch kind {
        case 0: command = .disconnect(detail: argument)
        case 1: command = .unsubscribe(channelName: argument)
        default: return nil
        }
        self.origin = origin
        self.id = id
        self.user = UserKey(app, userId)
    }

    func encoded() -> [UInt8] {
        var writer = MessagePackWriter()
        writer.writeArrayHeader(7)
        for part in ["command", origin, id, user.app, user.userId] { writer.writeString(part) }
        switch command {
        case .disconnect(let detail):
            writer.writeInteger(0)
            writer.writeString(detail)
        case .unsubscribe(let channelName):
            writer.writeInteger(1)
            writer.writeString(channelName)
        }
        return writer.bytes
    }
}

/// A node's answer to a command (`["acted", id, sessions, code, operation, reason]`), published on the asking
/// node's channel: how many sessions it acted on, or the refusal (code 0: none) its modules gave.
struct UserCommandAnswer: Sendable {
    var id: String
    var sessions: Int
    var refusal: RtmError?

    init(id: String, sessions: Int, refusal: RtmError?) {
        self.id = id
        self.sessions = sessions
        self.refusal = refusal
    }

    /// Reads an answer; nil when `bytes` are not one (a probe, say).
    init?(decoding bytes: [UInt8]) {
        var reader = MessagePackReader(bytes)
        guard (try? reader.readArrayHeader()) == 6, (try? reader.readString()) == "acted", let id = try? reader.readString(),
            let sessions = try? reader.readInteger(Int.self), let code = try? reader.readInteger(Int.self),
            let operation = try? reader.readString(), let reason = try? reader.readString(), reader.isAtEnd
        else { return nil }
        self.id = id
        self.sessions = sessions
        refusal = code == 0 ? nil : RtmErrorCode(rawValue: code).map { RtmError($0, operation: operation, reason: reason) }
    }

    func encoded() -> [UInt8] {
        var writer = MessagePackWriter()
        writer.writeArrayHeader(6)
        writer.writeString("acted")
        writer.writeString(id)
        writer.writeInteger(sessions)
        writer.writeInteger(refusal?.code.rawValue ?? 0)
        writer.writeString(refusal?.operation ?? "")
        writer.writeString(refusal?.reason ?? "")
        return writer.bytes
    }
}

/// The commands this node asked and is waiting for answers to: the answers that come in on its
/// node channel, handed to the waiting request in the order they came.
final class UserCommandWaits: Sendable {
    private let waiting = Mutex<(next: UInt64, streams: [String: AsyncStream<UserCommandAnswer>.Continuation])>((0, [:]))

    /// A new id for a command of `node`, and the answers to it as they come (before it is
    /// published, so none is missed); `forget` ends them.
    func expect(from node: String) -> (id: String, answers: AsyncStream<UserCommandAnswer>) {
        let (answers, continuation) = AsyncStream.makeStream(of: UserCommandAnswer.self)
        let id = waiting.withLock { waiting in
            waiting.next += 1
            let id = "\(node)-\(waiting.next)"
            waiting.streams[id] = continuation
            return id
        }
        return (id, answers)
    }

    /// An answer came in (one for a command no longer waited for is dropped).
    func heard(_ answer: UserCommandAnswer) {
        _ = waiting.withLock { $0.streams[answer.id] }?.yield(answer)
    }

    /// Stops waiting for answers to `id`.
    func forget(_ id: String) {
        waiting.withLock { $0.streams.removeValue(forKey: id) }?.finish()
    }

    /// The first `count` answers to `id`, or those that came within `wait` (real time: a network
    /// wait, as the Redis client's command timeout is).
    func gather(_ id: String, _ answers: AsyncStream<UserCommandAnswer>, count: Int, within wait: Duration) async -> [UserCommandAnswer] {
        let timer = Task { [self] in
            try? await Task.sleep(for: wait)
            forget(id)
        }
        defer {
            timer.cancel()
            forget(id)
        }
        var gathered: [UserCommandAnswer] = []
        for await answer in answers {
            gathered.append(answer)
            if gathered.count >= count { break }
        }
        return gathered
    }
}
