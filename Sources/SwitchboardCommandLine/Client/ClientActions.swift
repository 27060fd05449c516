import Foundation
import SwitchboardClient
import SwitchboardServer

/// What each `switchboard client` verb does once logged in.
enum ClientActions {
    static func publish(_ session: ClientSession, _ options: ParsedOptions) async throws {
        try await publish(session, to: options.arguments[0], options.arguments[1], type: .message, customType: options.value("custom-type"))
    }

    static func send(_ session: ClientSession, _ options: ParsedOptions) async throws {
        try await publish(session, to: options.arguments[0], options.arguments[1], type: .user, customType: options.value("custom-type"))
    }

    private static func publish(
        _ session: ClientSession, to channel: String, _ text: String, type: RtmChannelType, customType: String?
    ) async throws {
        let kit = session.kit
        _ = try await session.call {
            let options = RtmPublishOptions()
            options.channelType = type
            options.customType = customType ?? ""
            return await kit.publish(channelName: channel, message: text, option: options)
        }
        session.emit(ClientRecord(
            text: type == .user ? "sent to \(channel)" : "published on \(channel)",
            fields: [("event", type == .user ? "sent" : "published"), (type == .user ? "user" : "channel", .string(channel))]))
    }

    static func subscribe(_ session: ClientSession, _ options: ParsedOptions) async throws {
        let channel = options.arguments[0]
        let countText = options.value("count") ?? "0"
        guard let count = Int(countText), count >= 0 else { throw UsageError("--count takes a number, not '\(countText)'") }
        let kit = session.kit
        // With the lock feature too: a watcher hears the channel's lock events.
        _ = try await session.call {
            let options = RtmSubscribeOptions()
            options.features = [.message, .presence, .lock]
            return await kit.subscribe(channelName: channel, option: options)
        }
        session.note(count == 0 ? "subscribed to \(channel); Ctrl-C to stop" : "subscribed to \(channel)")
        let events = session.events
        let interruption = session.output.interruption
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var printed = 0
                for await event in events {
                    guard let record = record(of: event, on: channel) else { continue }
                    session.emit(record)
                    printed += 1
                    if count > 0 && printed >= count { return }
                }
            }
            group.addTask { await interruption() }
            await group.next()
            group.cancelAll()
        }
    }

    /// A message or presence event of `channel` (or a message to this user) as a record.
    static func record(of event: RtmEvent, on channel: String) -> ClientRecord? {
        switch event {
        case .message(let message) where message.channelName == channel || message.channelType == .user:
            let text = message.message.stringData ?? "<\(message.message.rawData?.count ?? 0) bytes>"
            let from = message.channelType == .user ? "(to me)" : "[\(message.channelName)]"
            return ClientRecord(
                text: "\(from) \(message.publisher): \(text)",
                fields: [
                    ("event", "message"), ("channel", .string(message.channelName)),
                    ("channelType", .string(String(describing: message.channelType))), ("publisher", .string(message.publisher)),
                    ("message", .string(text)), ("customType", .string(message.customType)),
                    ("timestamp", .integer(Int64(clamping: message.timestamp))),
                ])
        case .presence(let presence) where presence.channelName == channel:
            let type = String(describing: presence.type)
            let users = presence.type == .snapshot ? presence.snapshot.map(\.userId) : [presence.publisher]
            let states = presence.states.isEmpty ? "" : " " + presence.states.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
            return ClientRecord(
                text: "[\(presence.channelName)] \(type): \(users.joined(separator: ", "))\(states)",
                fields: [
                    ("event", "presence"), ("type", .string(type)), ("channel", .string(presence.channelName)),
                    ("users", .array(users.map { .string($0) })), ("states", stringMap(presence.states)),
                    ("timestamp", .integer(Int64(clamping: presence.timestamp))),
                ])
        default:
            return nil
        }
    }

    static func whoNow(_ session: ClientSession, _ options: ParsedOptions) async throws {
        let channel = options.arguments[0]
        guard let presence = session.kit.getPresence() else { throw ClientFailure("presence is not available") }
        let answer = try await session.call {
            let query = RtmPresenceOptions()
            query.includeState = true
            return await presence.whoNow(channelName: channel, channelType: .message, options: query)
        }
        let users = answer.userStateList
        let lines = users.map { user in
            user.userId + (user.states.isEmpty ? "" : " " + user.states.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))
        }
        session.emit(ClientRecord(
            text: "\(channel): \(answer.totalOccupancy) present" + lines.map { "\n  " + $0 }.joined(),
            fields: [
                ("channel", .string(channel)), ("totalOccupancy", .integer(Int64(answer.totalOccupancy))),
                ("users", .array(users.map { .object([("userId", .string($0.userId)), ("states", stringMap($0.states))]) })),
            ]))
    }

    static func whereNow(_ session: ClientSession, _ options: ParsedOptions) async throws {
        let user = options.arguments[0]
        guard let presence = session.kit.getPresence() else { throw ClientFailure("presence is not available") }
        let answer = try await session.call { await presence.whereNow(userId: user) }
        let channels = answer.channels.map { (name: $0.channelName, type: String(describing: $0.channelType)) }
        session.emit(ClientRecord(
            text: "\(user): " + (channels.isEmpty ? "in no channel" : channels.map { "\($0.name) (\($0.type))" }.joined(separator: ", ")),
            fields: [
                ("user", .string(user)),
                ("channels", .array(channels.map { .object([("channel", .string($0.name)), ("channelType", .string($0.type))]) })),
            ]))
    }

    static func metadata(_ session: ClientSession, _ options: ParsedOptions) async throws {
        let arguments = options.arguments
        let (verb, channel) = (arguments[0], arguments[1])
        guard let storage = session.kit.getStorage() else { throw ClientFailure("storage is not available") }
        let revisionText = options.value("revision")
        let revision = try revisionText.map { text in
            guard let revision = Int64(text) else { throw UsageError("--revision takes a number, not '\(text)'") }
            return revision
        }
        let lock = options.value("lock")
        switch verb {
        case "get":
            guard arguments.count <= 3 else { throw UsageError("meta get takes CHANNEL [KEY]") }
            let answer = try await session.call { await storage.getChannelMetadata(channelName: channel, channelType: .message) }
            var items = answer.data?.items ?? []
            if arguments.count == 3 {
                items = items.filter { $0.key == arguments[2] }
                guard !items.isEmpty else { throw ClientFailure("\(channel) has no item \(arguments[2])") }
            }
            session.emit(ClientRecord(
                text: "\(channel) (major revision \(answer.data?.majorRevision ?? -1))"
                    + items.map { "\n  \($0.key) = \($0.value) (revision \($0.revision), by \($0.authorUserId.isEmpty ? "-" : $0.authorUserId))" }.joined(),
                fields: [
                    ("channel", .string(channel)), ("majorRevision", .integer(answer.data?.majorRevision ?? -1)),
                    ("items", .array(items.map { item in
                        .object([
                            ("key", .string(item.key)), ("value", .string(item.value)), ("revision", .integer(item.revision)),
                            ("authorUserId", .string(item.authorUserId)), ("updateTs", .integer(Int64(clamping: item.updateTs))),
                        ])
                    })),
                ]))
        case "set", "remove":
            let isSet = verb == "set"
            guard arguments.count == (isSet ? 4 : 3) else {
                throw UsageError(isSet ? "meta set takes CHANNEL KEY VALUE" : "meta remove takes CHANNEL KEY")
            }
            let (key, value) = (arguments[2], isSet ? arguments[3] : "")
            _ = try await session.call {
                let data = RtmMetadata()
                data.items = [RtmMetadataItem(key: key, value: value, revision: revision ?? -1)]
                return isSet
                    ? await storage.setChannelMetadata(channelName: channel, channelType: .message, data: data, options: nil, lock: lock)
                    : await storage.removeChannelMetadata(channelName: channel, channelType: .message, data: data, options: nil, lock: lock)
            }
            session.emit(ClientRecord(
                text: isSet ? "set \(key) on \(channel)" : "removed \(key) from \(channel)",
                fields: [("event", .string(isSet ? "set" : "removed")), ("channel", .string(channel)), ("key", .string(key))]))
        default:
            throw UsageError("meta takes get, set or remove, not '\(verb)'")
        }
    }

    static func lock(_ session: ClientSession, _ options: ParsedOptions) async throws {
        let arguments = options.arguments
        let (verb, channel) = (arguments[0], arguments[1])
        guard let locks = session.kit.getLock() else { throw ClientFailure("locks are not available") }
        // A channel's locks are for its members: join it for its locks only.
        let kit = session.kit
        _ = try await session.call {
            let options = RtmSubscribeOptions()
            options.features = .lock
            return await kit.subscribe(channelName: channel, option: options)
        }
        if verb == "list" {
            let answer = try await session.call { await locks.getLocks(channelName: channel, channelType: .message) }
            let details = answer.lockDetailList
            session.emit(ClientRecord(
                text: "\(channel): " + (details.isEmpty ? "no locks" : details.map { "\n  \($0.lockName) owner \($0.owner.isEmpty ? "-" : $0.owner) ttl \($0.ttl)" }.joined()),
                fields: [
                    ("channel", .string(channel)),
                    ("locks", .array(details.map { .object([("lockName", .string($0.lockName)), ("owner", .string($0.owner)), ("ttl", .integer(Int64($0.ttl)))]) })),
                ]))
            return
        }
        guard arguments.count == 3 else { throw UsageError("lock \(verb) takes CHANNEL NAME") }
        let name = arguments[2]
        let ttlText = options.value("ttl") ?? "10"
        guard let ttl = Int32(ttlText) else { throw UsageError("--ttl takes seconds, not '\(ttlText)'") }
        let retry = options.flag("retry")
        let done: String
        switch verb {
        case "set":
            _ = try await session.call { await locks.setLock(channelName: channel, channelType: .message, lockName: name, ttl: ttl) }
            done = "set"
        case "acquire":
            _ = try await session.call { await locks.acquireLock(channelName: channel, channelType: .message, lockName: name, retry: retry) }
            done = "acquired"
        case "release":
            _ = try await session.call { await locks.releaseLock(channelName: channel, channelType: .message, lockName: name) }
            done = "released"
        default:
            throw UsageError("lock takes set, acquire, release or list, not '\(verb)'")
        }
        session.emit(ClientRecord(
            text: "\(done) lock \(name) on \(channel)",
            fields: [("event", .string(done)), ("channel", .string(channel)), ("lockName", .string(name))]))
    }

    static func stringMap(_ map: [String: String]) -> JSONValue {
        .object(map.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
    }
}
