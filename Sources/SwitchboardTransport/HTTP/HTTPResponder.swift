/// Answers the requests an `HTTPServer` reads, one at a time per connection, in order.
public protocol HTTPResponder: Sendable {
    /// The response to `request`.
    func respond(to request: HTTPRequest) async -> HTTPResponse
}
