import SwitchboardCore

/// What the server API's methods use: the bus (they send the requests clients' calls send),
/// the limits, the app ids served, and what `info` tells of this node.
struct APIContext: Sendable {
    let bus: EventBus
    /// The limits in force and the apps served (a reload changes them).
    let limitsBook: LimitsBook
    let clock: any SwitchboardClock
    /// When the server started, on `clock`.
    let startedAt: Duration
    /// This node as `info` lists it.
    let node: @Sendable () -> JSONValue
    /// This node's running totals and gauges, as `counters` answers them.
    let counters: @Sendable () -> NodeCounters
    /// The peer address of the connection that carries a session on this node, if one does.
    let address: @Sendable (SessionID) -> String?

    /// The server's limits in force.
    var limits: Limits { limitsBook.server }
    /// The app ids the server serves now; nil serves any.
    var appIds: Set<AppID>? { limitsBook.edition.served }

    /// The user id the server's calls show as theirs unless a call names one (`from`).
    static let serverUserId: UserID = "server"

    /// Sends `request` on the bus; a module's refusal becomes the API's failure.
    func request<R: BusRequest>(_ request: R) async throws(APIFailure) -> R.Response {
        do {
            return try await bus.request(request)
        } catch {
            throw APIFailure(error)
        }
    }

    /// The app a call names (`appId`), which the server must serve.
    func app(_ params: inout APIParameters) throws(APIFailure) -> AppID {
        try served(try params.string("appId"), method: params.method)
    }

    /// The app a call may name (`appId`), which the server must serve; nil when it names none.
    func optionalApp(_ params: inout APIParameters) throws(APIFailure) -> AppID? {
        guard let app = try params.optionalString("appId") else { return nil }
        return try served(app, method: params.method)
    }

    /// `app`, refused unless the server serves it.
    private func served(_ app: AppID, method: String) throws(APIFailure) -> AppID {
        guard !app.isEmpty, appIds?.contains(app) ?? true else {
            throw APIFailure(status: 400, .invalidAppId, operation: method, reason: "this server does not serve app id '\(app)'")
        }
        return app
    }

    /// The server's caller in the app a call names; with `from`, shown to clients as the user the
    /// call names in `from` (a message's publisher, a metadata write's author), else "server".
    func caller(_ params: inout APIParameters, from: Bool = false) throws(APIFailure) -> Caller {
        let app = try app(&params)
        let userId = from ? try params.optionalString("from") ?? Self.serverUserId : Self.serverUserId
        try check { () throws(RtmError) in try Validation.checkUserId(userId, limits: limits, operation: params.method) }
        return Caller.server(app: app, userId: userId)
    }

    /// Runs one of Core's checks; its refusal becomes the API's failure.
    func check(_ body: () throws(RtmError) -> Void) throws(APIFailure) {
        do {
            try body()
        } catch {
            throw APIFailure(error)
        }
    }
}

/// One method of the server API: its name (`POST /api/<name>`) and what it does with its
/// parameters.
struct APIMethod: Sendable {
    typealias Run = @Sendable (inout APIParameters, APIContext) async throws(APIFailure) -> JSONValue

    let name: String
    let run: Run

    init(_ name: String, _ run: @escaping Run) {
        self.name = name
        self.run = run
    }

    /// Every method but `batch`, by group.
    static let all: [APIMethod] = messaging + presence + users + channels + node + metadata + locks + tokens
}
