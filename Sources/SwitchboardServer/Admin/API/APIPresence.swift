import SwitchboardCore

/// Presence: who is in a channel (`presence`, paged like `whoNow`), where a user is
/// (`whereNow`), how many are in channels (`presenceStats`), and a member's temporary state
/// (`getState`, `setState`), through the presence module as clients' calls go.
extension APIMethod {
    static let presence = [
        APIMethod("presence", whoNow), APIMethod("whereNow", whereNow), APIMethod("presenceStats", presenceStats),
        APIMethod("getState", getState), APIMethod("setState", setState),
    ]

    /// The most channels one `presenceStats` names.
    static let presenceStatsChannelLimit = 100

    private static func whoNow(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params)
        let channel = try params.channel()
        let includeUserId = try params.bool("includeUserId", default: true)
        let includeState = try params.bool("includeState", default: false)
        let page = try params.optionalString("page") ?? ""
        try params.finish()
        let answer = try await api.request(
            WhoNow(caller: caller, channel: channel, includeUserId: includeUserId, includeState: includeState, page: page))
        return .object([
            ("totalOccupancy", .int(answer.totalOccupancy)),
            ("users", .array(answer.users.map { user in userState(user, withId: includeUserId, withStates: includeState) })),
            ("nextPage", .string(answer.nextPage)),
        ])
    }

    private static func whereNow(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params)
        let userId = try params.string("userId")
        try params.finish()
        let channels = try await api.request(WhereNow(caller: caller, userId: userId))
        return .object([("channels", .array(channels.map(address)))])
    }

    /// The occupancy of each channel named, as `whoNow` without ids or states answers it.
    private static func presenceStats(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params)
        var named = try params.objects("channels", limit: presenceStatsChannelLimit)
        guard !named.isEmpty else { throw .invalid(params.method, "channels is missing or empty") }
        try params.finish()
        var counts: [JSONValue] = []
        for index in named.indices {
            let channel = try named[index].channel()
            try named[index].finish()
            let page = try await api.request(WhoNow(caller: caller, channel: channel, includeUserId: false, includeState: false))
            counts.append(.object(address(channel).members + [("occupancy", .int(page.totalOccupancy))]))
        }
        return .object([("channels", .array(counts))])
    }

    private static func getState(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params)
        let channel = try params.channel()
        let userId = try params.string("userId")
        try params.finish()
        return userState(try await api.request(GetPresenceState(caller: caller, channel: channel, userId: userId)))
    }

    /// Sets keys of a member's state (`states`, an object of strings); other keys stay.
    private static func setState(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params)
        let channel = try params.channel()
        let userId = try params.string("userId")
        guard let states = try params.stringMap("states"), !states.isEmpty else {
            throw .invalid(params.method, "states is missing or empty")
        }
        try params.finish()
        _ = try await api.request(
            SetMemberPresenceState(
                caller: caller, channel: channel, userId: userId, items: states.map { StateItem(key: $0.0, value: $0.1) }))
        return .object([])
    }

    /// A user and its states, keys sorted.
    static func userState(_ user: UserState, withId: Bool = true, withStates: Bool = true) -> JSONValue {
        var members: [(String, JSONValue)] = []
        if withId { members.append(("userId", .string(user.userId))) }
        if withStates { members.append(("states", .object(user.states.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))) }
        return .object(members)
    }

    /// A channel as the API names it: `{"channelType": …, "channel": …}`.
    static func address(_ channel: ChannelAddress) -> JSONValue {
        .object([("channelType", .string(channel.type.apiName)), ("channel", .string(channel.name))])
    }
}

extension JSONValue {
    /// An object's members; none for any other value.
    var members: [(String, JSONValue)] {
        if case .object(let members) = self { members } else { [] }
    }
}
