import SwitchboardCore

/// What the nodes are doing: `counters`, this node's running totals and gauges the admin page
/// turns into rates every second (a JSON view of part of `/metrics`, behind the API's key), and
/// `info`, the server's version and uptime, every live node with its health and load, and the
/// counts of the app named.
extension APIMethod {
    static let node = [APIMethod("counters", counters), APIMethod("info", info)]

    /// `{"version", "uptimeSeconds", "nodes": [...], "app": {...}}`. `nodes` lists this node
    /// (`self`) and, in cluster mode, every other node whose liveness record has not expired, as
    /// each published its status at its last beat (so at most a beat old); sorted by `nodeId`.
    /// With `appId`, each node carries the app's load, and `app` the app's counts: those of this
    /// node's modules (sessions, users, channels, locks: a count whose module this server does
    /// not run is left out) and `acrossNodes`, its sessions and connections summed over the nodes
    /// listed and, in cluster mode, its users online on any node (read from the cluster's Redis). When the cluster's Redis cannot be read, `nodes` is this node alone and
    /// `nodesUnavailable` says why.
    private static func info(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let app = try api.optionalApp(&params)
        try params.finish()
        let here = try await api.request(CurrentNodeStatus())
        var nodes: [(id: String?, status: NodeStatus?)] = [(here.nodeID, here)]
        var unavailable: String?
        if api.bus.hasHandler(ListClusterNodes.self) {
            do {
                let live = try await api.bus.request(ListClusterNodes(app: app))
                nodes = live.filter { $0.nodeID != here.nodeID }.map { ($0.nodeID, $0.status) } + nodes
                nodes.sort { ($0.id ?? "") < ($1.id ?? "") }
            } catch {
                unavailable = error.reason
            }
        }
        let now = api.clock.wallNow
        let listed = nodes.map { node in
            nodeJSON(node.status, id: node.id, isSelf: node.id == here.nodeID, app: app, now: now)
        }
        let uptime = api.clock.now - api.startedAt
        var answer: [(String, JSONValue)] = [
            ("version", .string(SwitchboardServer.version)), ("uptimeSeconds", .int(uptime.components.seconds)), ("nodes", .array(listed)),
        ]
        if let app {
            var counts = try await appCounts(app, api)
            let loads = nodes.compactMap { $0.status?.apps[app] }
            var acrossNodes: [(String, JSONValue)] = [
                ("sessions", .int(loads.reduce(0) { $0 + $1.sessions })), ("connections", .int(loads.reduce(0) { $0 + $1.connections })),
            ]
            // In cluster mode, the app's users online on any node, as its concurrent-user limit counts them.
            if unavailable == nil, let users = try? await api.optionalRequest(CountUsersAcrossNodes(app: app)) {
                acrossNodes.append(("users", .int(users)))
            }
            counts.append(("acrossNodes", .object(acrossNodes)))
            answer.append(("app", .object(counts)))
        }
        if let unavailable { answer.append(("nodesUnavailable", .string(unavailable))) }
        return .object(answer)
    }

    /// One node as `info` lists it; a node that published no status shows its name only.
    private static func nodeJSON(_ status: NodeStatus?, id: String?, isSelf: Bool, app: AppID?, now: WallClockTime) -> JSONValue {
        let name = id.map { [("nodeId", JSONValue.string($0))] } ?? []
        guard let status else { return .object(name + [("self", .bool(isSelf))]) }
        let checks = status.checks.map { ($0.name, JSONValue.string($0.problem ?? "ok")) }
        var members: [(String, JSONValue)] =
            name + [
                ("url", .string(status.url)), ("host", .string(status.host)), ("self", .bool(isSelf)),
                ("connections", .int(status.connections)), ("version", .string(status.version)),
                ("startedAtMs", .int(status.startedAt.millisecondsSince1970)),
                ("uptimeSeconds", .int(max(0, (now - status.startedAt).components.seconds))), ("ready", .bool(status.isReady)),
                ("checks", .object(checks)),
                ("sessions", .object([("attached", .int(status.attachedSessions)), ("detached", .int(status.detachedSessions))])),
            ]
        if let app {
            let load = status.apps[app] ?? AppLoad()
            members.append(("app", .object([("sessions", .int(load.sessions)), ("connections", .int(load.connections))])))
        }
        return .object(members)
    }

    /// The counts this node's modules keep of `app`.
    private static func appCounts(_ app: AppID, _ api: APIContext) async throws(APIFailure) -> [(String, JSONValue)] {
        var counts: [(String, JSONValue)] = [("appId", .string(app))]
        if let sessions = try await api.optionalRequest(SessionStatistics(app: app)) {
            counts += [("sessions", .int(sessions.sessions)), ("suspendedSessions", .int(sessions.suspended)), ("users", .int(sessions.users))]
        }
        if let channels = try await api.optionalRequest(PresenceStatistics(app: app)) {
            let byType = [RtmChannelType.message, .stream].map { type in
                let count = channels[type] ?? MembershipCount()
                return (type.apiName, JSONValue.object([("channels", .int(count.channels)), ("members", .int(count.members))]))
            }
            counts.append(("channels", .object(byType)))
        }
        if let locks = try await api.optionalRequest(LockStatistics(app: app)) {
            counts.append(("locks", .object([("locks", .int(locks.locks)), ("held", .int(locks.held)), ("waiters", .int(locks.waiters))])))
        }
        return counts
    }

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
        counters.connectionsByApp = connectionsByApp
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
