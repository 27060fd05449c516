import SwitchboardCore

/// What this node is doing, whatever the app: `counters`, the running totals and gauges the admin
/// page turns into rates every second (a JSON view of part of `/metrics`, behind the API's key).
extension APIMethod {
    static let node = [APIMethod("counters", counters)]

    /// `{"node": {…as info lists it}, "uptimeSeconds", "connections": {awaitingLogin, loggedIn},
    /// "sessions": {attached, detached}, "logins", "publishes": {message, stream, user},
    /// "deliveries": {…}, "apps": [{appId, connections}]}`. `apps` lists the apps with
    /// connections here and every app the server is set to serve, by id. The node's own, not an
    /// app's, so it names no `appId`.
    private static func counters(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        try params.finish()
        let counters = api.counters()
        var apps = counters.connectionsByApp
        for app in api.appIds ?? [] where apps[app] == nil { apps[app] = 0 }
        let uptime = api.clock.now - api.startedAt
        return .object([
            ("node", api.node()), ("uptimeSeconds", .int(uptime.components.seconds)),
            ("connections", .object([("awaitingLogin", .int(counters.awaitingLogin)), ("loggedIn", .int(counters.loggedIn))])),
            ("sessions", .object([("attached", .int(counters.attachedSessions)), ("detached", .int(counters.detachedSessions))])),
            ("logins", .int(counters.logins)),
            ("publishes", .object(NodeCounters.channelTypes.map { ($0.apiName, .int(counters.publishes[$0] ?? 0)) })),
            ("deliveries", .object(NodeCounters.channelTypes.map { ($0.apiName, .int(counters.deliveries[$0] ?? 0)) })),
            ("apps", .array(apps.sorted { $0.key < $1.key }.map { .object([("appId", .string($0.key)), ("connections", .int($0.value))]) })),
        ])
    }
}

/// A node's counters at one moment, as `counters` answers them.
struct NodeCounters: Sendable {
    /// The channel types messages are counted by.
    static let channelTypes: [RtmChannelType] = [.message, .stream, .user]

    var awaitingLogin = 0
    var loggedIn = 0
    var attachedSessions = 0
    var detachedSessions = 0
    var logins: UInt64 = 0
    /// Logged-in connections by app.
    var connectionsByApp: [AppID: Int] = [:]
    /// Publishes accepted, by channel type.
    var publishes: [RtmChannelType: UInt64] = [:]
    /// Message pushes handed to sessions, by channel type.
    var deliveries: [RtmChannelType: UInt64] = [:]
}

extension SessionRegistry {
    /// The node's counters now: connections and sessions from the registry, logins, publishes and
    /// deliveries from the server's metrics.
    var nodeCounters: NodeCounters {
        var counters = NodeCounters()
        (counters.awaitingLogin, counters.loggedIn) = connectionStates
        let sessions = sessionStates
        (counters.attachedSessions, counters.detachedSessions) = (sessions.attached, sessions.detached)
        counters.logins = metrics.logins.value
        for (_, caller) in openLinks {
            if let caller { counters.connectionsByApp[caller.app, default: 0] += 1 }
        }
        for type in NodeCounters.channelTypes {
            counters.publishes[type] = metrics.publishCount(type)
            counters.deliveries[type] = metrics.deliveryCount(type)
        }
        return counters
    }

    /// The peer address of the open connection that carries `session`, if there is one.
    func address(of session: SessionID) -> String? {
        openLinks.first { $0.caller?.session == session }?.link.socket.remoteAddress
    }
}
