/// Reads HTTP/1.1 requests from a byte stream, one after another (keep-alive and pipelining),
/// within a bound on each head and each body. Pure: bytes in, requests or a failure out.
///
/// Once it fails it stays failed: a server answers the failure's status and closes, since what
/// follows a bad request cannot be framed.
public struct HTTPRequestParser: Sendable {
    /// Largest accepted head, blank line included.
    public let maxHeadBytes: Int
    /// Largest accepted body.
    public let maxBodyBytes: Int
    private var buffer: [UInt8] = []
    private var headEnd = HeadEnd()
    /// A head read whose body is not complete yet.
    private var pendingHead: (head: HTTPHead, bodyBytes: Int)?
    private var failure: HTTPRequestFailure?

    /// A parser with the given bounds.
    public init(maxHeadBytes: Int = 8192, maxBodyBytes: Int = 64 * 1024) {
        self.maxHeadBytes = maxHeadBytes
        self.maxBodyBytes = maxBodyBytes
    }

    /// Bytes received and not yet returned as part of a request.
    public var bufferedByteCount: Int { buffer.count }

    /// Appends received bytes; call `nextRequest()` to take the requests they complete.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        buffer.append(contentsOf: bytes)
    }

    /// Appends received bytes.
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next complete request, nil while more bytes are needed; throws when the bytes are
    /// not an acceptable request (and on every call after that).
    public mutating func nextRequest() throws(HTTPRequestFailure) -> HTTPRequest? {
        if let failure { throw failure }
        do {
            return try readRequest()
        } catch {
            failure = error
            buffer = []
            throw error
        }
    }

    private mutating func readRequest() throws(HTTPRequestFailure) -> HTTPRequest? {
        if pendingHead == nil {
            guard let end = headEnd.find(in: buffer) else {
                guard buffer.count <= maxHeadBytes else { throw .headTooLarge }
                return nil
            }
            guard end <= maxHeadBytes else { throw .headTooLarge }
            let head = try Self.parseHead(Array(buffer[..<end]), maxBodyBytes: maxBodyBytes)
            buffer.removeFirst(end)
            headEnd.reset()
            pendingHead = head
        }
        guard let (head, bodyBytes) = pendingHead, buffer.count >= bodyBytes else { return nil }
        let body = Array(buffer[..<bodyBytes])
        buffer.removeFirst(bodyBytes)
        pendingHead = nil
        return HTTPRequest(method: head.startLine[0], target: head.startLine[1], version: head.startLine[2], head: head, body: body)
    }

    /// Parses and checks a request head; returns it with its body's length.
    static func parseHead(_ bytes: [UInt8], maxBodyBytes: Int) throws(HTTPRequestFailure) -> (HTTPHead, Int) {
        guard let head = HTTPHead(bytes) else { throw .malformed("malformed head") }
        let method = head.startLine[0]
        let target = head.startLine[1]
        let version = head.startLine[2]
        guard method.utf8.allSatisfy(isTokenByte) else { throw .malformed("malformed method") }
        guard target.hasPrefix("/"), target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .malformed("malformed request target")
        }
        guard version.hasPrefix("HTTP/") else { throw .malformed("malformed version") }
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else { throw .unsupportedVersion }
        for (name, value) in head.headers {
            guard name.utf8.allSatisfy(isTokenByte) else { throw .malformed("malformed header name") }
            guard value.utf8.allSatisfy({ $0 >= 0x20 || $0 == 0x09 }), !value.utf8.contains(0x7F) else {
                throw .malformed("control character in header \(name)")
            }
        }
        if version == "HTTP/1.1" && head.header("host") == nil { throw .malformed("missing Host") }
        if head.header("transfer-encoding") != nil { throw .unsupportedTransferEncoding }
        let lengths = head.headers.filter { $0.name == "content-length" }.map(\.value)
        guard let length = lengths.first else { return (head, 0) }
        guard lengths.allSatisfy({ $0 == length }), !length.isEmpty, length.utf8.count <= 18,
            length.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let count = Int(length)
        else { throw .malformed("malformed Content-Length") }
        guard count <= maxBodyBytes else { throw .bodyTooLarge }
        return (head, count)
    }

    /// RFC 9110 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
