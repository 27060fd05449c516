import SwitchboardCore

/// One of the server's limits (`Limits`) as a key of the configuration file, under
/// `limits.<group>.<name>` for every app and, when it can be set per app, under
/// `apps.<id>.limits.<group>.<name>` for one: a whole number (seconds for a duration; 0 lifts a
/// limit that can be lifted). The modules read the limits in force at each request (from the
/// server's `LimitsBook`), so a SIGHUP changes them, except those the server sizes its buffers
/// with at start.
public struct LimitSetting: Sendable {
    /// The group (`"messages"`) and the name in it (`"payloadMaxBytes"`), as in `Limits`.
    public let group: String
    public let name: String
    /// The values it takes.
    public let range: ClosedRange<Int>
    public let help: String
    /// Every limit is read at each request and changes on SIGHUP, except the resume buffers, which
    /// the server sizes when it starts.
    public var reload: Reload { Self.readAtStart.contains(key) ? .restart : .live }
    static let readAtStart: Set<String> = [
        "limits.sessions.resumeBufferMaxMessages", "limits.sessions.resumeBufferMaxBytes",
        "limits.sessions.resumeBufferTotalBytes", "limits.sessions.resumeReplayMaxMessages",
        "limits.sessions.resumeReplayMaxBytes",
    ]

    /// Whether an app can have its own value (`apps.<id>.limits.<group>.<name>`): every limit of
    /// what an app's clients do, interval mode included (the reference's console sets it per
    /// project), not those of the node (the names every store keys by, the heartbeat grace its
    /// sweep applies to all, its resume buffers) nor the SDK's own (`statesCachedBeforeJoin`).
    public var perApp: Bool { !Self.serverWide.contains(key) }
    static let serverWide: Set<String> = readAtStart.union([
        "limits.names.channelNameMaxLength", "limits.names.userIdMaxBytes", "limits.sessions.heartbeatGrace",
        "limits.presence.statesCachedBeforeJoin",
    ])
    let read: @Sendable (Limits) -> Int
    let write: @Sendable (inout Limits, Int) -> Void

    /// `limits.<group>.<name>`.
    public var key: String { "limits.\(group).\(name)" }

    /// A count or size.
    init(_ group: String, _ name: String, _ path: WritableKeyPath<Limits, Int> & Sendable, _ range: ClosedRange<Int>, _ help: String) {
        self.init(group, name, range, help, read: { $0[keyPath: path] }, write: { $0[keyPath: path] = $1 })
    }

    /// A rate that can be lifted: 0 lifts it.
    init(_ group: String, _ name: String, lifted path: WritableKeyPath<Limits, Int?> & Sendable, _ range: ClosedRange<Int>, _ help: String) {
        self.init(
            group, name, 0...range.upperBound, help + "; 0 lifts it", read: { $0[keyPath: path] ?? 0 },
            write: { $0[keyPath: path] = $1 == 0 ? nil : $1 })
    }

    /// A duration, in whole seconds.
    init(_ group: String, _ name: String, seconds path: WritableKeyPath<Limits, Duration> & Sendable, _ range: ClosedRange<Int>, _ help: String) {
        self.init(
            group, name, range, help + ", in seconds", read: { Int($0[keyPath: path].components.seconds) },
            write: { $0[keyPath: path] = .seconds($1) })
    }

    /// One end of a range: its lower end when `lower`, else its upper end.
    init(
        _ group: String, _ name: String, range path: WritableKeyPath<Limits, ClosedRange<Int>> & Sendable, lower: Bool,
        _ range: ClosedRange<Int>, _ help: String
    ) {
        self.init(
            group, name, range, help, read: { lower ? $0[keyPath: path].lowerBound : $0[keyPath: path].upperBound },
            write: { limits, value in
                // An end that crosses the other takes it along, so the ends can be written in
                // either order (a file whose ends cross is refused before).
                let current = limits[keyPath: path]
                if lower {
                    limits[keyPath: path] = value...max(value, current.upperBound)
                } else {
                    limits[keyPath: path] = min(value, current.lowerBound)...value
                }
            })
    }

    private init(
        _ group: String, _ name: String, _ range: ClosedRange<Int>, _ help: String, read: @escaping @Sendable (Limits) -> Int,
        write: @escaping @Sendable (inout Limits, Int) -> Void
    ) {
        self.group = group
        self.name = name
        self.range = range
        self.help = help
        self.read = read
        self.write = write
    }

    /// The reference's value.
    public var defaultValue: Int { read(Limits()) }
}

/// Every limit the configuration file can set, server-wide and (`LimitSetting.perApp`) per app.
public enum LimitSettings {
    static let big = 1...100_000_000

    public static let all: [LimitSetting] = [
        LimitSetting("names", "channelNameMaxLength", \.names.channelNameMaxLength, 1...1024, "longest channel name, in characters"),
        LimitSetting("names", "userIdMaxBytes", \.names.userIdMaxBytes, 1...1024, "longest user id, in bytes"),

        LimitSetting("sessions", "concurrentUsers", \.sessions.concurrentUsers, big, "concurrent logged-in users per app"),
        LimitSetting("sessions", "heartbeatIntervalMin", range: \.sessions.heartbeatIntervalRange, lower: true, 1...86_400, "shortest heartbeatInterval a client gets, in seconds"),
        LimitSetting("sessions", "heartbeatIntervalMax", range: \.sessions.heartbeatIntervalRange, lower: false, 1...86_400, "longest heartbeatInterval a client gets, in seconds"),
        LimitSetting("sessions", "defaultHeartbeatInterval", \.sessions.defaultHeartbeatInterval, 1...86_400, "heartbeatInterval of a client that asks for none, in seconds"),
        LimitSetting("sessions", "heartbeatGrace", \.sessions.heartbeatGrace, 0...3600, "silence tolerated after a missed heartbeat, in seconds"),
        LimitSetting("sessions", "presenceTimeoutMin", range: \.sessions.presenceTimeoutRange, lower: true, 0...86_400, "shortest presenceTimeout a client gets, in seconds"),
        LimitSetting("sessions", "presenceTimeoutMax", range: \.sessions.presenceTimeoutRange, lower: false, 0...86_400, "longest presenceTimeout a client gets, in seconds"),
        LimitSetting("sessions", "defaultPresenceTimeout", \.sessions.defaultPresenceTimeout, 0...86_400, "presenceTimeout of a client that asks for none, in seconds"),
        LimitSetting("sessions", "otherCallsPerSecondPerClient", lifted: \.sessions.otherCallsPerSecondPerClient, big, "other calls one client may make per second"),
        LimitSetting("sessions", "resumeBufferMaxMessages", \.sessions.resumeBufferMaxMessages, 0...10_000_000, "messages kept for a disconnected session"),
        LimitSetting("sessions", "resumeBufferMaxBytes", \.sessions.resumeBufferMaxBytes, 0...1_073_741_824, "bytes kept for a disconnected session"),
        LimitSetting("sessions", "resumeBufferTotalBytes", \.sessions.resumeBufferTotalBytes, 0...68_719_476_736, "bytes kept for all disconnected sessions together"),
        LimitSetting("sessions", "resumeReplayMaxMessages", \.sessions.resumeReplayMaxMessages, 0...1_000_000, "recent messages kept for a connected session, to send again after a resume"),
        LimitSetting("sessions", "resumeReplayMaxBytes", \.sessions.resumeReplayMaxBytes, 0...1_073_741_824, "recent bytes kept for a connected session"),

        LimitSetting("messages", "payloadMaxBytes", \.messages.payloadMaxBytes, 1...65_536, "largest message payload, in bytes (a frame holds 66,560)"),
        LimitSetting("messages", "customTypeMaxLength", \.messages.customTypeMaxLength, 0...1024, "longest customType, in characters"),
        LimitSetting("messages", "subscribedChannelsPerClient", \.messages.subscribedChannelsPerClient, big, "message channels one client may subscribe to"),
        LimitSetting("messages", "usersPerChannel", \.messages.usersPerChannel, big, "users per message channel"),
        LimitSetting("messages", "publishesPerSecondPerClient", lifted: \.messages.publishesPerSecondPerClient, big, "messages one client may publish per second"),
        LimitSetting("messages", "perChannelPerSecond", lifted: \.messages.perChannelPerSecond, big, "messages one channel carries per second (the excess is discarded)"),
        LimitSetting("messages", "subscribeAttemptsPerChannel", \.messages.subscribeAttemptsPerChannel, 1...1000, "subscribe calls by one session to one channel within the window"),
        LimitSetting("messages", "subscribeAttemptWindow", seconds: \.messages.subscribeAttemptWindow, 1...3600, "the window of subscribeAttemptsPerChannel"),

        LimitSetting("streams", "joinedChannelsPerClient", \.streams.joinedChannelsPerClient, 1...10_000, "stream channels one client may join"),
        LimitSetting("streams", "usersPerChannel", \.streams.usersPerChannel, 1...100_000, "users per stream channel"),
        LimitSetting("streams", "joinedTopicsPerChannel", \.streams.joinedTopicsPerChannel, 1...1000, "topics one client may join per stream channel"),
        LimitSetting("streams", "subscribedTopicsPerChannel", \.streams.subscribedTopicsPerChannel, 1...10_000, "topics one client may subscribe to per stream channel"),
        LimitSetting("streams", "publishersPerTopicSubscription", \.streams.publishersPerTopicSubscription, 1...10_000, "publishers one client may subscribe to in one topic"),
        LimitSetting("streams", "topicNameMaxLength", \.streams.topicNameMaxLength, 1...1024, "longest topic name, in characters"),
        LimitSetting("streams", "topicMetaMaxBytes", \.streams.topicMetaMaxBytes, 0...16_384, "largest topic meta, in bytes"),
        LimitSetting("streams", "topicPayloadMaxBytes", \.streams.topicPayloadMaxBytes, 1...65_536, "largest topic message payload, in bytes"),
        LimitSetting("streams", "topicMessagesPerSecond", lifted: \.streams.topicMessagesPerSecond, big, "messages per second in one topic"),

        LimitSetting("presence", "statesPerUser", \.presence.statesPerUser, 0...10_000, "key/value pairs of one user's state in one channel"),
        LimitSetting("presence", "statesCachedBeforeJoin", \.presence.statesCachedBeforeJoin, 0...10_000, "state pairs the SDK keeps for channels not joined yet"),
        LimitSetting("presence", "stateKeyMaxLength", \.presence.stateKeyMaxLength, 1...1024, "longest state key, in characters"),
        LimitSetting("presence", "stateValueMaxBytes", \.presence.stateValueMaxBytes, 0...65_536, "largest state value, in bytes"),
        LimitSetting("presence", "stateMaxBytes", \.presence.stateMaxBytes, 0...65_536, "largest whole state of one user in one channel, in bytes"),
        LimitSetting("presence", "intervalThreshold", \.presence.intervalThreshold, 8...128, "members above which presence events come at intervals"),
        LimitSetting("presence", "interval", seconds: \.presence.interval, 5...300, "the period of interval mode"),
        LimitSetting("presence", "intervalDebounce", seconds: \.presence.intervalDebounce, 0...3600, "time at or below the threshold before events are real-time again"),
        LimitSetting("presence", "snapshotMaxUsers", \.presence.snapshotMaxUsers, 1...100_000, "members a snapshot lists"),
        LimitSetting("presence", "whoNowPageSize", \.presence.whoNowPageSize, 1...10_000, "members one whoNow page lists"),
        LimitSetting("presence", "userQueryMaxUsers", \.presence.userQueryMaxUsers, 1...10_000, "user ids one getUserPresence call may ask about"),

        LimitSetting("storage", "keyMaxLength", \.storage.keyMaxLength, 1...1024, "longest metadata key, in characters"),
        LimitSetting("storage", "valueMaxBytes", \.storage.valueMaxBytes, 0...65_536, "largest metadata value, in bytes"),
        LimitSetting("storage", "setMaxBytes", \.storage.setMaxBytes, 0...65_536, "largest metadata set, in bytes"),
        LimitSetting("storage", "itemsPerSet", \.storage.itemsPerSet, 1...100_000, "items in one metadata set"),
        LimitSetting("storage", "callsPerSecondPerClient", lifted: \.storage.callsPerSecondPerClient, big, "storage calls one client may make per second"),
        LimitSetting("storage", "userSubscriptionsPerClient", \.storage.userSubscriptionsPerClient, 0...100_000, "users whose metadata one client may subscribe to"),

        LimitSetting("locks", "perChannel", \.locks.perChannel, 1...100_000, "locks one channel may have"),
        LimitSetting("locks", "perApp", \.locks.perApp, 1...100_000_000, "locks all the channels of one app may have"),
        LimitSetting("locks", "ttlMin", range: \.locks.ttlRange, lower: true, 1...86_400, "shortest lock ttl, in seconds"),
        LimitSetting("locks", "ttlMax", range: \.locks.ttlRange, lower: false, 1...86_400, "longest lock ttl, in seconds"),
        LimitSetting("locks", "defaultTTL", \.locks.defaultTTL, 1...86_400, "lock ttl when none is given, in seconds"),
        LimitSetting("locks", "nameMaxLength", \.locks.nameMaxLength, 1...1024, "longest lock name, in characters"),
        LimitSetting("locks", "acquiresPerSecondPerClient", lifted: \.locks.acquiresPerSecondPerClient, big, "lock acquire calls one client may make per second"),
    ]

    /// The groups, in order.
    static var groups: [String] {
        all.map(\.group).reduce(into: []) { groups, group in if !groups.contains(group) { groups.append(group) } }
    }

    /// The limit of `group` named `name`.
    static func named(_ group: String, _ name: String) -> LimitSetting? { all.first { $0.group == group && $0.name == name } }

    /// The limit whose key is `key` (`limits.<group>.<name>`).
    static func keyed(_ key: String) -> LimitSetting? { all.first { $0.key == key } }

    /// The limits an app can set for itself.
    public static var perApp: [LimitSetting] { all.filter(\.perApp) }

    /// `base` with `values` (by key) applied.
    static func applied(_ values: [String: Int], to base: Limits) -> Limits {
        var limits = base
        for setting in all { if let value = values[setting.key] { setting.write(&limits, value) } }
        return limits
    }
}
