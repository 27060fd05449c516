import Foundation
import Glibc
import Synchronization
import SwitchboardTestKit
import Testing
@testable import SwitchboardTransport

/// A loopback listener that treats each connection as told, on a thread of its own: the
/// misbehaving receivers an HTTP client must survive.
///
/// The peer alone closes the descriptors it accepted: each once its treatment returns, under the
/// lock `stop()` shuts the open ones down with. A treatment that closed its socket itself would
/// leave `stop()` a number another test's socket may have by then (the test process is shared):
/// shutting that down ends someone else's connection, a Redis link or a WebSocket.
final class MisbehavingPeer: Sendable {
    let port: Int
    private let fd: Int32
    private let held = Mutex<(open: Set<Int32>, stopped: Bool)>(([], false))

    /// Listens on 127.0.0.1 and runs `treat` for each accepted connection (blocking is fine); the
    /// connection is closed when `treat` returns, so a treatment that returns at once closes it at
    /// once. `treat` must not close it.
    init(_ treat: @escaping @Sendable (Int32) -> Void) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(listener, raw, length) == 0 && getsockname(listener, raw, &length) == 0
            }
        }
        guard bound, listen(listener, 16) == 0 else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        fd = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else {
                    // Closed here, once accept has failed (stop() only shuts it down): closed in
                    // stop(), its number could go to another test's socket before this thread's
                    // next accept, which would then take that test's connections.
                    close(listener)
                    return
                }
                let taken = held.withLock { held -> Bool in
                    if held.stopped { return false }
                    held.open.insert(client)
                    return true
                }
                guard taken else {
                    close(client)
                    continue
                }
                Thread { [self] in
                    treat(client)
                    held.withLock { held in
                        held.open.remove(client)
                        close(client)
                    }
                }.start()
            }
        }.start()
    }

    /// Reads what the client sent until the blank line ending its head (or a bound).
    static func readHead(_ fd: Int32) {
        var seen: [UInt8] = []
        var byte: UInt8 = 0
        while seen.count < 65536, read(fd, &byte, 1) == 1 {
            seen.append(byte)
            if seen.suffix(4) == [13, 10, 13, 10] { return }
        }
    }

    /// Reads and drops everything until the client closes (or `stop()`): a receiver that never answers.
    static func readUntilClosed(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while read(fd, &buffer, buffer.count) > 0 {}
    }

    static func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        // MSG_NOSIGNAL: the client under test may have closed already (an endless head it refused);
        // a plain write would raise SIGPIPE and end the whole test process.
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Wakes every treatment blocked on its socket and the accepting thread; each closes its own.
    func stop() {
        held.withLock { held in
            held.stopped = true
            for client in held.open { shutdown(client, Int32(SHUT_RDWR)) }
        }
        shutdown(fd, Int32(SHUT_RDWR))  // wakes the accepting thread, which closes it
    }
}

/// The webhooks' HTTP client against a well-behaved server (the positive control) and against
/// receivers that close early, answer garbage, never answer or answer without end; its URL and
/// response-head readers on every input.
@Suite(.timeLimit(.minutes(2))) struct HTTPClientTests {
    final class RecordingResponder: HTTPResponder {
        let requests = Mutex<[HTTPRequest]>([])
        func respond(to request: HTTPRequest) async -> HTTPResponse {
            requests.withLock { $0.append(request) }
            return HTTPResponse(status: 201, body: Array("made".utf8))
        }
    }

    func post(_ port: Int, timeout: Duration = .seconds(30)) async throws -> (Result<HTTPResponseHead, HTTPClientError>, Duration) {
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        let client = HTTPClient(group: group)
        let start = ContinuousClock.now
        let result = await client.send(
            to: HTTPURL("http://127.0.0.1:\(port)/hooks?x=1")!, headers: [HTTPHeaderField("X-Test", "yes")], body: Array("{}".utf8),
            timeout: timeout)
        return (result, ContinuousClock.now - start)
    }

    @Test func aPostReachesTheServerWithItsHeadersAndBodyAndGetsTheStatus() async throws {
        let group = try EventLoopGroup(threads: 1)
        let responder = RecordingResponder()
        var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: 0)
        // A full test run on two cores can keep the responder's task waiting for seconds.
        configuration.requestTimeout = .seconds(60)
        let server = HTTPServer(configuration: configuration, group: group, responder: responder)
        let port = try server.start()
        defer {
            server.stop()
            group.shutdown()
        }
        let (result, _) = try await post(port)
        #expect(try result.get().status == 201)
        let request = try #require(responder.requests.withLock { $0.first })
        #expect(request.method == "POST" && request.target == "/hooks?x=1" && request.body == Array("{}".utf8))
        #expect(request.header("X-Test") == "yes" && request.header("Connection") == "close")
    }

    @Test func aReceiverThatClosesAtOnceFailsTheAttempt() async throws {
        let peer = try MisbehavingPeer { _ in }  // closed as soon as accepted
        defer { peer.stop() }
        let (result, _) = try await post(peer.port)
        #expect(result == .failure(.closedEarly))
    }

    @Test func aReceiverThatAnswersGarbageFailsTheAttempt() async throws {
        let peer = try MisbehavingPeer { fd in
            MisbehavingPeer.readHead(fd)
            MisbehavingPeer.send(fd, "SSH-2.0-OpenSSH\r\n\r\n")
            MisbehavingPeer.readUntilClosed(fd)
        }
        defer { peer.stop() }
        let (result, _) = try await post(peer.port)
        guard case .failure(.invalidResponse) = result else { Issue.record("\(result)"); return }
    }

    @Test func aReceiverThatNeverAnswersTimesOutWithinTheTimeout() async throws {
        let peer = try MisbehavingPeer { MisbehavingPeer.readUntilClosed($0) }
        defer { peer.stop() }
        let (result, took) = try await post(peer.port, timeout: .milliseconds(300))
        #expect(result == .failure(.timedOut))
        // Ends at its timeout, not at the peer's pleasure (bounded loosely: a full test run on two
        // cores can hold a resumption back for seconds).
        #expect(took >= .milliseconds(250) && took < .seconds(20), "\(took)")
    }

    @Test func anEndlessResponseHeadIsRefusedWithoutWaitingForItsEnd() async throws {
        let peer = try MisbehavingPeer { fd in
            MisbehavingPeer.readHead(fd)
            MisbehavingPeer.send(fd, "HTTP/1.1 200 OK\r\n")
            for _ in 0..<4000 { MisbehavingPeer.send(fd, "X-Padding: aaaaaaaa\r\n") }
            MisbehavingPeer.readUntilClosed(fd)
        }
        defer { peer.stop() }
        let (result, _) = try await post(peer.port)
        guard case .failure(.invalidResponse(let reason)) = result else { Issue.record("\(result)"); return }
        #expect(reason.contains("longer than"))
    }

    @Test func anAnswerInOneBytePiecesIsRead() async throws {
        let peer = try MisbehavingPeer { fd in
            MisbehavingPeer.readHead(fd)
            for character in "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n" {
                MisbehavingPeer.send(fd, String(character))
                usleep(1000)
            }
            MisbehavingPeer.readUntilClosed(fd)
        }
        defer { peer.stop() }
        let (result, _) = try await post(peer.port)
        #expect(try result.get().status == 204)
    }

    @Test func aPortNobodyListensOnFailsToConnect() async throws {
        let port = try RedisServer.freePort()
        let (result, _) = try await post(port)
        guard case .failure(.connectFailed) = result else { Issue.record("\(result)"); return }
    }

    @Test func urlsAreReadOrRefused() {
        let url = HTTPURL("https://hooks.example:8443/in?a=b")
        #expect(url?.secure == true && url?.host == "hooks.example" && url?.port == 8443 && url?.target == "/in?a=b")
        #expect(HTTPURL("http://127.0.0.1")?.target == "/" && HTTPURL("http://127.0.0.1")?.port == 80)
        #expect(HTTPURL("http://[::1]:9000/x")?.host == "::1" && HTTPURL("http://[::1]:9000/x")?.hostHeader == "[::1]:9000")
        #expect(HTTPURL("http://h?q")?.target == "/?q")
        for bad in ["ftp://h/", "http://", "http://:80/", "http://h:0/", "http://h:99999/", "http://u@h/", "http://h/a b", "http://h/#f", "h/x"] {
            #expect(HTTPURL(bad) == nil, "\(bad)")
        }
    }

    @Test func responseHeadsAreReadWhateverTheSplitAndGarbageNeverCrashes() {
        let head = Array("HTTP/1.1 503 Busy\r\nRetry-After: 3\r\nX-Empty:\r\n\r\nbody".utf8)
        var generator = SeededGenerator(seed: 22)
        for _ in 0..<200 {
            var parser = HTTPResponseHeadParser()
            var progress = HTTPResponseHeadParser.Progress.needMore
            var index = 0
            while index < head.count, progress == .needMore {
                let step = Int.random(in: 1...8, using: &generator)
                progress = parser.feed(head[index..<min(head.count, index + step)])
                index += step
            }
            #expect(progress == .head(HTTPResponseHead(status: 503, headers: [HTTPHeaderField("Retry-After", "3"), HTTPHeaderField("X-Empty", "")])))
        }
        for _ in 0..<2000 {
            let bytes = generator.bytes(count: Int.random(in: 0...64, using: &generator), in: 0...255)
            let prefixed = Array("HTTP/1.1 ".utf8) + bytes + (Bool.random(using: &generator) ? [13, 10, 13, 10] : [])
            var whole = HTTPResponseHeadParser()
            var pieces = HTTPResponseHeadParser()
            let once = whole.feed(prefixed)
            var split = HTTPResponseHeadParser.Progress.needMore
            for byte in prefixed where split == .needMore { split = pieces.feed([byte]) }
            #expect(once == split, "\(prefixed)")
        }
        var small = HTTPResponseHeadParser(maxHeadBytes: 32)
        #expect(small.feed(Array("HTTP/1.1 200 OK\r\nX: \(String(repeating: "a", count: 40))".utf8)) != .needMore)
        var notHTTP = HTTPResponseHeadParser()
        #expect(notHTTP.feed(Array("HTT".utf8)) == .needMore)
        #expect(notHTTP.feed(Array("X".utf8)) == .invalid("the answer is not HTTP"))
    }
}
