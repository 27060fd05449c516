import Synchronization
import SwitchboardTransport

/// The admin listener's routes: a request goes to the handler registered for its method and
/// path; an unknown path is 404, a known path with another method 405 (with `Allow`). HEAD is
/// answered as GET without the body.
///
/// Routes are exact paths, or a prefix ending in "/" with `prefix: true` (the server API under
/// `/api/` goes there, behind its API-key check, when it comes).
public final class AdminRouter: HTTPResponder {
    /// Answers one request of a route.
    public typealias Handler = @Sendable (HTTPRequest) async -> HTTPResponse

    private struct Route {
        let path: String
        let prefix: Bool
        var handlers: [String: Handler]
    }

    private let routes = Mutex<[Route]>([])

    /// A router with no routes.
    public init() {}

    /// Answers `method` requests for `path` (or, with `prefix`, every path under it) with
    /// `handler`; replaces an earlier handler of the same method and path.
    public func add(_ method: String, _ path: String, prefix: Bool = false, _ handler: @escaping Handler) {
        routes.withLock { routes in
            if let index = routes.firstIndex(where: { $0.path == path && $0.prefix == prefix }) {
                routes[index].handlers[method] = handler
            } else {
                routes.append(Route(path: path, prefix: prefix, handlers: [method: handler]))
            }
        }
    }

    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        let path = request.path
        let route = routes.withLock { routes in
            routes.first { !$0.prefix && $0.path == path } ?? routes.filter { $0.prefix && path.hasPrefix($0.path) }
                .max { $0.path.count < $1.path.count }
        }
        guard let route else { return .text(404, "no such endpoint\n") }
        let method = request.method == "HEAD" ? "GET" : request.method
        guard let handler = route.handlers[method] else {
            var allowed = route.handlers.keys.sorted()
            if allowed.contains("GET") { allowed.append("HEAD") }
            return .text(405, "method not allowed\n", headers: [HTTPHeaderField("Allow", allowed.joined(separator: ", "))])
        }
        return await handler(request)
    }
}
