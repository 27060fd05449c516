import SwitchboardCore

/// What the server does to a user: end every session (`disconnect`; each client is told
/// `kickedOutByServer` and does not reconnect) or unsubscribe it from a message channel
/// (`unsubscribe`; the other members hear it leave); and what it knows of one: its sessions
/// (`sessions`).
extension APIMethod {
    static let users = [
        APIMethod("disconnect", disconnect), APIMethod("unsubscribe", unsubscribe), APIMethod("sessions", sessions),
    ]

    /// `{"sessions": n}`: how many sessions ended (0 when the user had none), on every node in
    /// cluster mode (`nodesUnanswered` when some node holding the user did not answer in time).
    private static func disconnect(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params)
        let userId = try params.string("userId")
        let reason = try params.optionalString("reason") ?? "disconnected by the server"
        guard reason.utf8.count <= 120 else { throw .invalid(params.method, "reason is over 120 bytes") }
        try params.finish()
        return try await api.carryOut(.disconnect(detail: reason), caller: caller, userId: userId)
    }

    /// `{"sessions": n}`: how many of the user's sessions left the channel, on every node in
    /// cluster mode, as `disconnect`.
    private static func unsubscribe(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params)
        let channel = try params.string("channel")
        let userId = try params.string("userId")
        try params.finish()
        return try await api.carryOut(.unsubscribe(channelName: channel), caller: caller, userId: userId)
    }

    /// `{"sessions": [{session, connected, lastSeenMs, suspendedAtMs?, heartbeatInterval,
    /// presenceTimeout, tokenExpiresAt?, address?}]}`, oldest first: every session of the user the
    /// session module keeps, connected or waiting for a resume; `address` is the peer of the
    /// connection carrying it when that connection is on this node.
    private static func sessions(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params)
        let userId = try params.string("userId")
        try params.finish()
        let sessions = try await api.request(ListUserSessions(caller: caller, userId: userId))
        return .object([
            ("sessions", .array(sessions.map { session in
                var members: [(String, JSONValue)] = [
                    ("session", .int(session.session.rawValue)), ("connected", .bool(session.suspendedAt == nil)),
                    ("lastSeenMs", .int(session.lastSeen.millisecondsSince1970)),
                ]
                if let suspendedAt = session.suspendedAt { members.append(("suspendedAtMs", .int(suspendedAt.millisecondsSince1970))) }
                members += [("heartbeatInterval", .int(session.heartbeatInterval)), ("presenceTimeout", .int(session.presenceTimeout))]
                if let expiry = session.tokenExpiresAt { members.append(("tokenExpiresAt", .int(expiry))) }
                if let address = api.address(session.session) { members.append(("address", .string(address))) }
                return .object(members)
            })),
        ])
    }
}

extension APIContext {
    /// `{"sessions": n}`: carries `command` out on `userId`'s sessions, through this node's
    /// modules or, in cluster mode (a relay answers `CommandUserAcrossNodes`), on every node.
    func carryOut(_ command: UserCommand, caller: Caller, userId: UserID) async throws(APIFailure) -> JSONValue {
        guard bus.hasHandler(CommandUserAcrossNodes.self) else {
            do {
                return .object([("sessions", .int(try await command.carryOut(on: bus, caller: caller, userId: userId)))])
            } catch {
                throw APIFailure(error)
            }
        }
        let tally = try await request(CommandUserAcrossNodes(caller: caller, userId: userId, command: command))
        return .object([("sessions", .int(tally.sessions))] + (tally.unanswered > 0 ? [("nodesUnanswered", .int(tally.unanswered))] : []))
    }
}
