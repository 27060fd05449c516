import SwitchboardCore

/// What the server does to a user: end every session (`disconnect`; each client is told
/// `kickedOutByServer` and does not reconnect) or unsubscribe it from a message channel
/// (`unsubscribe`; the other members hear it leave).
extension APIMethod {
    static let users = [APIMethod("disconnect", disconnect), APIMethod("unsubscribe", unsubscribe)]

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
}
