/// Why `HTTPRequestParser` refused a request, with the status a server answers it with before
/// closing the connection.
public enum HTTPRequestFailure: Error, Sendable, Equatable {
    /// The head grew past the limit before it ended (431).
    case headTooLarge
    /// Content-Length exceeds the body limit (413).
    case bodyTooLarge
    /// Not a well-formed HTTP/1.x request (400), and why.
    case malformed(String)
    /// A version other than HTTP/1.0 and HTTP/1.1 (505).
    case unsupportedVersion
    /// A body framing the parser does not read: Transfer-Encoding (501).
    case unsupportedTransferEncoding

    /// The response status for this failure.
    public var status: Int {
        switch self {
        case .headTooLarge: 431
        case .bodyTooLarge: 413
        case .malformed: 400
        case .unsupportedVersion: 505
        case .unsupportedTransferEncoding: 501
        }
    }

    /// A short reason for the response body and the log.
    public var reason: String {
        switch self {
        case .headTooLarge: "request head too large"
        case .bodyTooLarge: "request body too large"
        case .malformed(let why): "bad request: \(why)"
        case .unsupportedVersion: "HTTP/1.1 or HTTP/1.0 required"
        case .unsupportedTransferEncoding: "Transfer-Encoding is not supported; send Content-Length"
        }
    }
}
