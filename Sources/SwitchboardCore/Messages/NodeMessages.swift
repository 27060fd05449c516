/// What a node tells of itself: its name, version and start, whether it is ready (each check),
/// its connections and sessions, and its load per app. The server answers `CurrentNodeStatus`
/// with it; in cluster mode the relay publishes it with every beat, and `ListClusterNodes` reads
/// every live node's.
public struct NodeStatus: Sendable, Hashable {
    /// The node's name in its cluster; nil for a node on its own.
    public var nodeID: String?
    /// The server's version.
    public var version: String
    /// Where clients connect.
    public var url: String
    /// The host the client port listens on.
    public var host: String
    /// When the node started (its wall clock).
    public var startedAt: WallClockTime
    /// Each readiness check, in the order the node runs them.
    public var checks: [ReadinessState]
    /// Open connections that have not logged in yet.
    public var awaitingLogin: Int
    /// Open connections that carry a session.
    public var loggedIn: Int
    /// Sessions with a connection.
    public var attachedSessions: Int
    /// Sessions waiting for a resume.
    public var detachedSessions: Int
    /// The load of each app with a session or a connection here. In a status read from the
    /// cluster (`ListClusterNodes`) only the app asked for, if the node has it.
    public var apps: [AppID: AppLoad]

    /// Creates a status.
    public init(
        nodeID: String?, version: String, url: String, host: String, startedAt: WallClockTime, checks: [ReadinessState] = [],
        awaitingLogin: Int = 0, loggedIn: Int = 0, attachedSessions: Int = 0, detachedSessions: Int = 0, apps: [AppID: AppLoad] = [:]
    ) {
        self.nodeID = nodeID
        self.version = version
        self.url = url
        self.host = host
        self.startedAt = startedAt
        self.checks = checks
        self.awaitingLogin = awaitingLogin
        self.loggedIn = loggedIn
        self.attachedSessions = attachedSessions
        self.detachedSessions = detachedSessions
        self.apps = apps
    }

    /// Ready when every check is.
    public var isReady: Bool { checks.allSatisfy(\.isReady) }
    /// Every open connection.
    public var connections: Int { awaitingLogin + loggedIn }
    /// Every session, with a connection or waiting for a resume.
    public var sessions: Int { attachedSessions + detachedSessions }
}

/// One readiness check of a node: its name, and why it is not ready (nil when it is).
public struct ReadinessState: Sendable, Hashable {
    /// The check's name ("listener", "redis", "pubsub" …).
    public var name: String
    /// Why it is not ready; nil when it is.
    public var problem: String?
    /// Creates a state.
    public init(name: String, problem: String? = nil) {
        self.name = name
        self.problem = problem
    }
    /// Whether the check is ready.
    public var isReady: Bool { problem == nil }
}

/// What one app has on one node.
public struct AppLoad: Sendable, Hashable {
    /// Its sessions, with a connection or waiting for a resume.
    public var sessions: Int
    /// Its logged-in connections.
    public var connections: Int
    /// Creates a load.
    public init(sessions: Int = 0, connections: Int = 0) {
        self.sessions = sessions
        self.connections = connections
    }
}

/// This node's status now. Answered by the server, which alone knows its connections and
/// readiness; asked by the relay every beat (to publish it) and by the server API's `info`.
public struct CurrentNodeStatus: BusRequest, Hashable {
    public typealias Response = NodeStatus
    public static let operation = OperationName.Server.nodeStatus.rawValue
    /// Creates the query.
    public init() {}
}

/// Every live node of the cluster, as each last published its status (this one included), with
/// the load of `app` on each (none when nil). Answered by the relay (the cluster link) in one
/// round trip to the cluster's Redis; on a node on its own nothing answers it.
///
/// Throws `notConnected` when the cluster's Redis cannot be read now.
public struct ListClusterNodes: BusRequest, Hashable {
    public typealias Response = [LiveNode]
    public static let operation = OperationName.Relay.listClusterNodes.rawValue
    /// The app whose load each node's status carries; nil for none.
    public var app: AppID?
    /// Creates the query.
    public init(app: AppID? = nil) { self.app = app }
}

/// A node whose liveness record has not expired, and its last published status (nil when it
/// published none: it runs a version that does not, or its status expired before its record).
public struct LiveNode: Sendable, Hashable {
    /// Its name.
    public var nodeID: String
    /// Its last published status.
    public var status: NodeStatus?
    /// Creates an entry.
    public init(nodeID: String, status: NodeStatus?) {
        self.nodeID = nodeID
        self.status = status
    }
}

/// How many sessions each app has (with a connection or waiting for a resume), apps with none
/// left out: for the node's status. Answered by the session module.
public struct SessionsByApp: BusRequest, Hashable {
    public typealias Response = [AppID: Int]
    public static let operation = OperationName.Server.statistics.rawValue
    /// Creates the query.
    public init() {}
}
