import Foundation
import Synchronization
import SwitchboardTestKit
import Testing
@testable import SwitchboardTransport

/// The HTTP server against raw sockets that misbehave, each case next to a well-behaved request
/// on the same server that is answered (the positive control).
@Suite(.timeLimit(.minutes(2))) struct HTTPServerHostileInputTests {
    /// Answers every request with its method and path; counts what it was asked.
    final class EchoResponder: HTTPResponder {
        let asked = Mutex<[String]>([])
        /// The refusals the server reported.
        let refusals = Mutex<[String]>([])

        func respond(to request: HTTPRequest) async -> HTTPResponse {
            asked.withLock { $0.append("\(request.method) \(request.target)") }
            return .text(200, "\(request.method) \(request.target)")
        }
    }

    private func withHTTPServer(
        requestTimeout: Duration = .seconds(10),
        _ body: (_ port: Int, _ responder: EchoResponder) async throws -> Void
    ) async throws {
        let group = try EventLoopGroup(threads: 1)
        let responder = EchoResponder()
        var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0)
        configuration.maxHeadBytes = 1024
        configuration.maxBodyBytes = 256
        configuration.requestTimeout = requestTimeout
        configuration.onRefusal = { [responder] _, reason in responder.refusals.withLock { $0.append(reason) } }
        let server = HTTPServer(configuration: configuration, group: group, responder: responder)
        defer {
            server.stop()
            group.shutdown()
        }
        try await body(try server.start(), responder)
    }

    /// What a raw client saw: the responses it read (up to the count asked for) and whether the
    /// server closed the connection after them.
    struct Conversation: Sendable {
        var responses: [(head: String, body: String)] = []
        var bodies: [String] { responses.map(\.body) }
    }

    /// Connects, writes each of `writes` in turn (waiting `pause` between them), then reads up to
    /// `responses` responses; on a thread of its own, so the blocking socket never holds up the
    /// tasks that answer.
    private func converse(
        _ port: Int, _ writes: [[UInt8]], responses: Int, pause: Duration = .zero
    ) async throws -> Conversation {
        try await BlockingWork.run {
            let raw = try RawClient(port: port)
            for (index, bytes) in writes.enumerated() {
                if index > 0 { Thread.sleep(forTimeInterval: Double(pause.components.attoseconds) * 1e-18) }
                raw.write(bytes)
            }
            var conversation = Conversation()
            while conversation.responses.count < responses, let response = raw.readHTTPResponse() {
                conversation.responses.append(response)
            }
            return conversation
        }
    }

    private static func get(_ path: String, extra: String = "") -> [UInt8] {
        Array("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\(extra)\r\n".utf8)
    }

    @Test func pipelinedKeepAliveRequestsAreAnsweredInOrderOnOneConnection() async throws {
        try await withHTTPServer { port, responder in
            let talk = try await converse(
                port, [Self.get("/a") + Self.get("/b") + Self.get("/c", extra: "Connection: close\r\n")], responses: 4)
            #expect(talk.bodies == ["GET /a", "GET /b", "GET /c"])
            #expect(talk.responses.first?.head.contains("Connection: keep-alive") == true)
            #expect(talk.responses.last?.head.contains("Connection: close") == true)
            #expect(responder.asked.withLock { $0 } == ["GET /a", "GET /b", "GET /c"])
        }
    }

    @Test func keepAliveRequestsSentOneAfterAnotherShareTheConnection() async throws {
        try await withHTTPServer { port, _ in
            let talk = try await converse(port, [Self.get("/one"), Self.get("/two")], responses: 2, pause: .milliseconds(50))
            #expect(talk.bodies == ["GET /one", "GET /two"])
        }
    }

    @Test func aSlowHeadIsClosedAfterTheTimeLimitWhileAPromptOneIsAnswered() async throws {
        try await withHTTPServer(requestTimeout: .milliseconds(300)) { port, responder in
            async let slow = converse(port, [Array("GET /slow HTTP/1.1\r\nHost: localhost\r\n".utf8)], responses: 1)
            let prompt = try await converse(port, [Self.get("/prompt")], responses: 1)
            #expect(prompt.bodies == ["GET /prompt"])
            // The slow client never finishes its head: the server closes it without an answer.
            #expect(try await slow.responses.isEmpty)
            #expect(await eventually { responder.refusals.withLock { $0.contains("request timeout") } })
            #expect(responder.asked.withLock { $0 } == ["GET /prompt"])
        }
    }

    @Test(arguments: [
        ("huge head", "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: \(String(repeating: "a", count: 2000))\r\n\r\n", 431),
        ("bad request line", "HELLO\r\n\r\n", 400),
        ("control bytes", "\u{16}\u{03}\u{01}\u{00} / HTTP/1.1\r\n\r\n", 400),
        ("body too large", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n", 413),
        ("chunked body", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", 501),
        ("HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400),
    ])
    func aBadRequestGetsItsStatusAndTheConnectionCloses(_ name: String, _ text: String, _ status: Int) async throws {
        let bytes = Array(text.utf8)
        try await withHTTPServer { port, responder in
            let talk = try await converse(port, [Self.get("/first") + bytes + Self.get("/never")], responses: 3)
            #expect(talk.bodies.first == "GET /first", "\(name)")
            #expect(talk.responses.count == 2, "\(name): nothing after the refusal")
            let refused = talk.responses.last?.head ?? "EOF"
            #expect(refused.hasPrefix("HTTP/1.1 \(status) "), "\(name): \(refused)")
            #expect(refused.contains("Connection: close"), "\(name)")
            #expect(responder.asked.withLock { $0 } == ["GET /first"], "\(name)")
        }
    }

    @Test func aClientPipeliningFarAheadOfItsAnswersIsClosed() async throws {
        try await withHTTPServer { port, responder in
            // Far more than one request's worth of bytes sent while the first is answered.
            let one = Self.get("/again")
            let flood = Array([[UInt8]](repeating: one, count: 64 * 1024 / one.count).joined())
            let talk = try await converse(port, [flood], responses: 10_000)
            #expect(talk.responses.count < 64 * 1024 / one.count)
            #expect(await eventually { responder.refusals.withLock { $0.contains { $0.contains("ahead of their answers") } } })
            // The positive control: the server still answers a client that waits for its answers.
            let polite = try await converse(port, [Self.get("/polite")], responses: 1)
            #expect(polite.bodies == ["GET /polite"])
        }
    }
}
