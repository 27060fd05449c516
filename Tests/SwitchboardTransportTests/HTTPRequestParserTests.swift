import SwitchboardTestKit
import Testing
@testable import SwitchboardTransport

/// The HTTP/1.1 request parser alone: framing, bounds, and refusals with their statuses.
@Suite(.timeLimit(.minutes(1))) struct HTTPRequestParserTests {
    private static let pipelined = Array(
        ("GET /health/live HTTP/1.1\r\nHost: a\r\n\r\n"
            + "POST /api/x?y=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
            + "GET /metrics HTTP/1.0\r\n\r\n").utf8)

    private static func requests(_ chunks: [[UInt8]], parser: HTTPRequestParser = HTTPRequestParser()) throws -> [HTTPRequest] {
        var parser = parser
        var requests: [HTTPRequest] = []
        for chunk in chunks {
            parser.append(chunk)
            while let request = try parser.nextRequest() { requests.append(request) }
        }
        return requests
    }

    @Test func pipelinedRequestsComeOutInOrderWithTheirBodies() throws {
        let requests = try Self.requests([Self.pipelined])
        #expect(requests.map(\.method) == ["GET", "POST", "GET"])
        #expect(requests.map { String($0.path) } == ["/health/live", "/api/x", "/metrics"])
        #expect(requests[1].query == "y=1")
        #expect(requests[1].body == Array("hello".utf8))
        #expect(requests.map(\.keepsAlive) == [true, false, false])
    }

    @Test func anySplitOfTheBytesGivesTheSameRequests() throws {
        let whole = try Self.requests([Self.pipelined])
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<200 {
            var chunks: [[UInt8]] = []
            var rest = Self.pipelined[...]
            while !rest.isEmpty {
                let take = Int.random(in: 1...min(rest.count, 40), using: &generator)
                chunks.append(Array(rest.prefix(take)))
                rest = rest.dropFirst(take)
            }
            #expect(try Self.requests(chunks) == whole)
        }
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: a\r\nX: \(String(repeating: "a", count: 300))\r\n\r\n", HTTPRequestFailure.headTooLarge),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 65\r\n\r\n", .bodyTooLarge),
        ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", .unsupportedVersion),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", .unsupportedTransferEncoding),
        ("GET /\r\n\r\n", .malformed("malformed head")),
        ("GET http://elsewhere/ HTTP/1.1\r\nHost: a\r\n\r\n", .malformed("malformed request target")),
        ("GET / HTTP/1.1\r\n\r\n", .malformed("missing Host")),
        ("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", .malformed("malformed method")),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", .malformed("malformed Content-Length")),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", .malformed("malformed Content-Length")),
        ("GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n", .malformed("malformed head")),
    ])
    func refusedRequestsNameTheirStatus(_ text: String, _ failure: HTTPRequestFailure) {
        var parser = HTTPRequestParser(maxHeadBytes: 256, maxBodyBytes: 64)
        parser.append(Array(text.utf8))
        #expect(throws: failure) { try parser.nextRequest() }
        // Failed for good: nothing after a bad request is read.
        parser.append(Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        #expect(throws: failure) { try parser.nextRequest() }
    }

    @Test func aHeadWithoutItsEndIsRefusedOncePastTheBound() throws {
        var parser = HTTPRequestParser(maxHeadBytes: 64)
        parser.append(Array("GET / HTTP/1.1\r\nHost: a\r\n".utf8))
        #expect(try parser.nextRequest() == nil)
        parser.append(Array(repeating: UInt8(ascii: "a"), count: 64))
        #expect(throws: HTTPRequestFailure.headTooLarge) { try parser.nextRequest() }
    }
}
