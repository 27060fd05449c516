import SwitchboardCore
import SwitchboardTransport

/// The server API on the admin listener: `POST /api/<method>` with a JSON object of parameters
/// (every call names its `appId`) and `Authorization: apikey <key>`; the answer is a JSON object,
/// or an error object (`APIFailure`) with the reference's code and name and a fitting status.
/// `POST /api/batch` runs a list of calls in order. Each method does what the same action does
/// for a client, by sending the bus requests a client's call sends, from the server's caller.
///
/// Refused keys are logged (at most 20 lines a second) and counted (`switchboard_refusals_total`
/// by reason); answered calls are counted by method and status (`switchboard_api_calls_total`).
final class ServerAPI: Sendable {
    /// The path every method sits under.
    static let prefix = "/api/"
    /// The most calls one batch holds.
    static let batchLimit = 100
    /// The largest body the admin listener takes when it serves the API.
    static let maxBodyBytes = 1024 * 1024
    /// The deepest nesting a body may have.
    static let maxDepth = 16
    /// The method that runs others.
    static let batchName = "batch"
    /// Every method served, `batch` included.
    static let methodNames: [String] = APIMethod.all.map(\.name) + [batchName]
    private static let methods = Dictionary(uniqueKeysWithValues: APIMethod.all.map { ($0.name, $0) })

    let keyring: APIKeyring
    private let context: APIContext
    private let rate: APIRateLimiter?
    private let metrics: ServerMetrics
    private let refusals: RefusalLog
    private let ready: @Sendable () async -> Bool

    init(
        keyring: APIKeyring, context: APIContext, rate: APIRateLimiter?, metrics: ServerMetrics, refusals: RefusalLog,
        ready: @escaping @Sendable () async -> Bool
    ) {
        self.keyring = keyring
        self.context = context
        self.rate = rate
        self.metrics = metrics
        self.refusals = refusals
        self.ready = ready
    }

    /// The answer to one request under `prefix`.
    func respond(to request: HTTPRequest) async -> HTTPResponse {
        guard let key = authorize(request) else {
            return Self.answer(
                401, APIFailure(status: 401, .loginNotAuthorized, operation: "api", reason: "give a valid key: Authorization: apikey <key>").json,
                headers: [HTTPHeaderField("WWW-Authenticate", "apikey")])
        }
        let name = String(request.path.dropFirst(Self.prefix.count))
        guard name == Self.batchName || Self.methods[name] != nil else {
            metrics.apiCallAnswered(method: "unknown", status: 404)
            return Self.answer(404, APIFailure(status: 404, .serviceNotSupport, operation: name, reason: "no method '\(name)'").json)
        }
        let (status, body) = await answer(name, body: request.body, key: key)
        return Self.answer(status, body)
    }

    /// The digest of the key the request presents, if it opens the API; logs and counts a refusal.
    private func authorize(_ request: HTTPRequest) -> [UInt8]? {
        let words = (request.header("authorization") ?? "").split(separator: " ", maxSplits: 1)
        guard words.count == 2, words[0].lowercased() == "apikey" else {
            refusals.refused(request.remoteAddress, "api: no API key")
            return nil
        }
        guard let digest = keyring.match(String(words[1].drop { $0 == " " })) else {
            refusals.refused(request.remoteAddress, "api: wrong API key")
            return nil
        }
        return digest
    }

    private func answer(_ name: String, body: [UInt8], key: [UInt8]) async -> (Int, JSONValue) {
        guard await ready() else {
            let failure = APIFailure(status: 503, .notInitialized, operation: name, reason: "the server is not ready (starting or shutting down)")
            metrics.apiCallAnswered(method: name, status: 503)
            return (503, failure.json)
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(body, maxDepth: Self.maxDepth)
        } catch {
            metrics.apiCallAnswered(method: name, status: 400)
            return (400, APIFailure.invalid(name, "the body is not JSON: \(error)").json)
        }
        guard name == Self.batchName else { return await call(name, value, key: key) }
        return await batch(value, key: key)
    }

    /// Runs the calls of a batch (`{"calls": [{"method": …, "params": {…}}]}`) one after another:
    /// `{"results": [{"status": …, "result" or "error": …}]}`, answered 200 whatever each call's
    /// status.
    private func batch(_ value: JSONValue, key: [UInt8]) async -> (Int, JSONValue) {
        let name = Self.batchName
        var calls: [(String, JSONValue)] = []
        do throws(APIFailure) {
            var params = try APIParameters(value, method: name)
            for var call in try params.objects("calls", limit: Self.batchLimit) {
                let method = try call.string("method")
                guard method != name else { throw APIFailure.invalid(name, "a batch cannot hold a batch") }
                calls.append((method, try call.optionalObject("params") ?? .object([])))
                try call.finish()
            }
            try params.finish()
        } catch {
            metrics.apiCallAnswered(method: name, status: error.status)
            return (error.status, error.json)
        }
        metrics.apiCallAnswered(method: name, status: 200)
        var results: [JSONValue] = []
        for (method, params) in calls {
            let (status, body) = await call(method, params, key: key)
            results.append(.object([("status", .int(status)), (status == 200 ? "result" : "error", body)]))
        }
        return (200, .object([("results", .array(results))]))
    }

    /// Runs one call of `name`, counted by its status.
    private func call(_ name: String, _ params: JSONValue, key: [UInt8]) async -> (Int, JSONValue) {
        let (status, body): (Int, JSONValue)
        do throws(APIFailure) {
            guard let method = Self.methods[name] else {
                throw APIFailure(status: 404, .serviceNotSupport, operation: name, reason: "no method '\(name)'")
            }
            if let rate, !rate.admit(key) { throw rate.refusal(name) }
            var parameters = try APIParameters(params, method: name)
            (status, body) = (200, try await method.run(&parameters, context))
        } catch {
            (status, body) = (error.status, error.json)
        }
        metrics.apiCallAnswered(method: Self.methods[name] == nil ? "unknown" : name, status: status)
        return (status, body)
    }

    /// An answer: never kept by a cache (it is live state, fetched with a key), never sniffed.
    private static func answer(_ status: Int, _ body: JSONValue, headers: [HTTPHeaderField] = []) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [
                HTTPHeaderField("Content-Type", "application/json"), HTTPHeaderField("Cache-Control", "no-store"),
                HTTPHeaderField("X-Content-Type-Options", "nosniff"),
            ] + headers,
            body: Array(body.text.utf8))
    }
}
