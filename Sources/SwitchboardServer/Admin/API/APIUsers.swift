import SwitchboardCore

/// What the server does to a user: end every session (`disconnect`; each client is told
/// `kickedOutByServer` and does not reconnect) or unsubscribe it from a message channel
/// (`unsubscribe`; the other members hear it leave); and what it knows of one: its sessions
/// (`sessions`).
extension APIMethod {
    static let users = [
        APIMethod("disconnect", disconnect), APIMethod("unsubscribe", unsubscribe), APIMethod("sessions", sessions),
    ]

    /// `{"sessions": n}`: how many sessions ended (0 when the user had none).
    private static func disconnect(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params)
        let userId = try params.string("userId")
        let reason = try params.optionalString("reason") ?? "disconnected by the server"
        guard reason.utf8.count <= 120 else { throw .invalid(params.method, "reason is over 120 bytes") }
        try params.finish()
        let ended = try await api.request(DisconnectUser(caller: caller, userId: userId, detail: reason))
        return .object([("sessions", .int(ended))])
    }

    /// `{"sessions": n}`: how many of the user's sessions left the channel.
    private static func unsubscribe(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params)
        let channel = try params.string("channel")
        let userId = try params.string("userId")
        try params.finish()
        let left = try await api.request(UnsubscribeUser(caller: caller, channelName: channel, userId: userId))
        return .object([("sessions", .int(left))])
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
