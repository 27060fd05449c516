import SwitchboardCore
import SwitchboardTransport

/// Answers `CurrentNodeStatus` on the bus: this node's name, version and start, each readiness
/// check, its connections and sessions from the registry, and each app's load (sessions from the
/// session module, `SessionsByApp`; logged-in connections from the registry). Asked at beat rate
/// by the cluster link and by the server API's `info`, never on a message's path: the
/// registry's counts are one walk of its connections under its lock.
struct NodeStatusSource: Sendable {
    let nodeID: String?
    let url: String
    let host: String
    let startedAt: WallClockTime
    let readiness: Readiness
    let registry: SessionRegistry<WebSocketConnection>

    /// How long the session module may take to count its sessions before a status goes without
    /// them.
    static let sessionCountTimeout: Duration = .seconds(1)

    /// Makes this `bus`'s answer to `CurrentNodeStatus` (holding the bus weakly: the bus holds
    /// the answer).
    func register(on bus: EventBus) {
        bus.handle(CurrentNodeStatus.self) { [weak bus] _ in await status(asking: bus) }
    }

    /// The node's status now; the apps' sessions come from `bus`'s session module.
    func status(asking bus: EventBus?) async -> NodeStatus {
        async let report = readiness.evaluate()
        var sessions: [AppID: Int] = [:]
        if let bus, bus.hasHandler(SessionsByApp.self),
            let counted = await Deadline.answer(within: Self.sessionCountTimeout, { try? await bus.request(SessionsByApp()) }) ?? nil
        {
            sessions = counted
        }
        var apps = sessions.mapValues { AppLoad(sessions: $0) }
        for (app, connections) in registry.connectionsByApp { apps[app, default: AppLoad()].connections = connections }
        let (awaitingLogin, loggedIn) = registry.connectionStates
        let states = registry.sessionStates
        let evaluated = await report
        let checks = evaluated.checks.map { check in
            switch check.result {
            case .ready: ReadinessState(name: check.name)
            case .notReady(let reason): ReadinessState(name: check.name, problem: reason)
            }
        }
        return NodeStatus(
            nodeID: nodeID, version: SwitchboardServer.version, url: url, host: host, startedAt: startedAt, checks: checks,
            awaitingLogin: awaitingLogin, loggedIn: loggedIn, attachedSessions: states.attached, detachedSessions: states.detached,
            apps: apps)
    }
}
