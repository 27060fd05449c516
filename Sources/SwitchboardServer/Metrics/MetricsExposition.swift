import SwitchboardCluster
import SwitchboardCore
import SwitchboardTransport

/// Writes a scrape of everything the server knows about itself in the Prometheus text format:
/// its counters (`ServerMetrics`), the state of its connections and sessions, its sockets'
/// traffic, and what the modules count of their own state (`ModuleStatistics`).
struct MetricsExposition {
    let metrics: ServerMetrics
    let registry: SessionRegistry<WebSocketConnection>
    /// The client listener and its loops, while the server runs.
    let listener: (server: WebSocketServer, group: EventLoopGroup)?
    /// The modules' counts, gathered for this scrape.
    let modules: ModuleStatistics
    /// In cluster mode, the link to the other nodes.
    var cluster: ClusterLink?

    /// The scrape.
    func text() -> String {
        var out = PrometheusText()
        writeConnections(&out)
        writeSessions(&out)
        writeTraffic(&out)
        writeRequests(&out)
        writeRefusals(&out)
        writeAPICalls(&out)
        writeModules(&out)
        if let cluster { writeCluster(cluster, &out) }
        return out.text
    }

    private func writeConnections(_ out: inout PrometheusText) {
        let links = registry.connectionStates
        out.family("switchboard_connections_open", .gauge, help: "Client connections open, by state.")
        out.sample("switchboard_connections_open", [("state", "handshaking")], UInt64(listener?.server.handshakeCount ?? 0))
        out.sample("switchboard_connections_open", [("state", "awaiting_login")], UInt64(links.awaitingLogin))
        out.sample("switchboard_connections_open", [("state", "logged_in")], UInt64(links.loggedIn))
    }

    private func writeSessions(_ out: inout PrometheusText) {
        let sessions = registry.sessionStates
        out.family("switchboard_sessions", .gauge, help: "Sessions, attached to a connection or detached and waiting for a resume.")
        out.sample("switchboard_sessions", [("state", "attached")], UInt64(sessions.attached))
        out.sample("switchboard_sessions", [("state", "detached")], UInt64(sessions.detached))
        out.single(
            "switchboard_detached_session_bytes", .gauge, help: "Bytes of pushes detached sessions keep for their resume.",
            UInt64(sessions.detachedBytes))
        out.single("switchboard_logins_total", .counter, help: "Logins granted.", metrics.logins.value)
        out.family("switchboard_login_failures_total", .counter, help: "Logins refused, by error code.")
        for (code, count) in metrics.loginFailures.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            out.sample("switchboard_login_failures_total", [("code", String(code.rawValue)), ("error", "\(code)")], count)
        }
    }

    private func writeTraffic(_ out: inout PrometheusText) {
        let types: [(RtmChannelType, String)] = [(.message, "message"), (.user, "user"), (.stream, "stream")]
        out.family("switchboard_publishes_total", .counter, help: "Messages accepted for publishing, by channel type.")
        for (type, label) in types { out.sample("switchboard_publishes_total", [("channel_type", label)], metrics.publishCount(type)) }
        out.family("switchboard_deliveries_total", .counter, help: "Message pushes handed to receiving sessions, by channel type.")
        for (type, label) in types {
            out.sample("switchboard_deliveries_total", [("channel_type", label)], metrics.deliveryCount(type))
        }
        out.single(
            "switchboard_received_bytes_total", .counter, help: "Bytes read from client sockets (TLS records included).",
            listener?.group.bytesReceived ?? 0)
        out.single(
            "switchboard_sent_bytes_total", .counter, help: "Bytes written to client sockets (TLS records included).",
            listener?.group.bytesSent ?? 0)
    }

    private func writeRequests(_ out: inout PrometheusText) {
        let requests = metrics.requests
        let atOnce = metrics.answeredAtOnce
        out.family("switchboard_requests_total", .counter, help: "Client requests answered, by operation and result.")
        var counts = Dictionary(uniqueKeysWithValues: requests.map { ($0.operation, ($0.succeeded, $0.failed)) })
        counts[OperationName.Messages.publish.rawValue, default: (0, 0)].0 += atOnce.succeeded
        counts[OperationName.Messages.publish.rawValue, default: (0, 0)].1 += atOnce.failed
        for (operation, (succeeded, failed)) in counts.sorted(by: { $0.key < $1.key }) {
            out.sample("switchboard_requests_total", [("operation", operation), ("result", "ok")], succeeded)
            out.sample("switchboard_requests_total", [("operation", operation), ("result", "error")], failed)
        }
        out.family(
            "switchboard_request_duration_seconds", .histogram,
            help: "Time from taking a request off the request loop to its answer, by operation (publishes answered at once on the event loop are not timed).")
        for request in requests {
            out.histogram("switchboard_request_duration_seconds", [("operation", request.operation)], request.latency)
        }
    }

    private func writeRefusals(_ out: inout PrometheusText) {
        let refusals = metrics.refusals
        out.family(
            "switchboard_refusals_total", .counter,
            help: "Connections refused or closed by policy, and server API requests refused for their key, by reason.")
        for reason in RefusalReason.allCases {
            out.sample("switchboard_refusals_total", [("reason", reason.rawValue)], refusals[reason] ?? 0)
        }
        out.single(
            "switchboard_slow_consumer_closes_total", .counter,
            help: "Connections closed because they did not read their pushes fast enough.", refusals[.slowConsumer] ?? 0)
    }

    private func writeAPICalls(_ out: inout PrometheusText) {
        out.family("switchboard_api_calls_total", .counter, help: "Server API calls answered, by method and HTTP status.")
        for (call, count) in metrics.apiCalls.sorted(by: { ($0.key.method, $0.key.status) < ($1.key.method, $1.key.status) }) {
            out.sample("switchboard_api_calls_total", [("method", call.method), ("status", String(call.status))], count)
        }
    }
}
