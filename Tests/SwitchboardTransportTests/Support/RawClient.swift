import Foundation
import Glibc
import Testing
import SwitchboardTestKit
import SwitchboardCrypto
@testable import SwitchboardTransport

/// A blocking socket speaking raw bytes to the server, for tests that need to misbehave; after
/// `startTLS` the bytes go through TLS.
final class RawClient {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var tls: TLSSession?

    init(port: Int, receiveBufferSize: Int32? = nil) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        // The standard patience (15 s): on a busy two-core machine an answer can take seconds.
        var timeout = timeval(tv_sec: Int(Patience.standard.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBufferSize {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let failure = SocketError("connect")
            Glibc.close(fd)
            throw failure
        }
        // Stored last: once every property is set, a throwing init also runs `deinit`, which
        // would close the descriptor a second time (and maybe another test's socket by then).
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    /// Runs a TLS handshake as a client with `context`, checking the certificate for `host`.
    func startTLS(_ context: TLSContext, host: String) throws {
        let session = try TLSSession(context: context, peerHost: host)
        while try !session.handshake() {
            guard sendRaw(session.takeCiphertext()), let bytes = receiveRaw() else { throw SocketError("TLS handshake") }
            bytes.withUnsafeBytes { session.feed($0) }
        }
        _ = sendRaw(session.takeCiphertext())
        tls = session
    }

    func write(_ bytes: [UInt8]) {
        _ = tryWrite(bytes)
    }

    /// Writes all of `bytes`; false when the connection failed first.
    func tryWrite(_ bytes: [UInt8]) -> Bool {
        guard let tls else { return sendRaw(bytes) }
        let encrypted = bytes.withUnsafeBytes { raw in (try? tls.write(raw)) != nil }
        return encrypted && sendRaw(tls.takeCiphertext())
    }

    private func sendRaw(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    private func receiveRaw() -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? Array(chunk[0..<n]) : nil
    }

    /// Reads more bytes (decrypted, after `startTLS`) into the buffer; false on EOF, error or
    /// timeout.
    private func fill() -> Bool {
        while let chunk = receiveRaw() {
            guard let tls else {
                buffer += chunk
                return true
            }
            chunk.withUnsafeBytes { tls.feed($0) }
            var plain = [UInt8](repeating: 0, count: 65536)
            var got = false
            while true {
                let result = plain.withUnsafeMutableBytes { raw in try? tls.read(into: raw) }
                guard case .bytes(let count) = result else { break }
                buffer += plain[0..<count]
                got = true
            }
            if got { return true }
        }
        return false
    }

    /// Sends an upgrade request and returns the response head.
    func handshake(
        path: String = "/", subprotocol: String? = nil, extra: String = "", version: String = "13"
    ) -> String? {
        var request = "GET \(path) HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
        request += "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        request += "Sec-WebSocket-Version: \(version)\r\n"
        if let subprotocol { request += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
        write(Array((request + extra + "\r\n").utf8))
        return readHead()
    }

    /// Reads up to the end of an HTTP head.
    func readHead() -> String? {
        while true {
            if let end = findHeadEnd() {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end)
                return head
            }
            guard fill() else { return nil }
        }
    }

    /// Reads exactly `count` bytes; nil on EOF or timeout first.
    func readBytes(_ count: Int) -> [UInt8]? {
        while buffer.count < count {
            guard fill() else { return nil }
        }
        let bytes = Array(buffer[..<count])
        buffer.removeFirst(count)
        return bytes
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4)
        where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i + 4
        }
        return nil
    }

    /// Reads one server frame: (fin, opcode, payload); nil on EOF or timeout.
    func readFrame() -> (fin: Bool, opcode: UInt8, payload: [UInt8])? {
        while true {
            if let header = buffer.withUnsafeBytes({ FrameHeader.parse($0) }) {
                let total = header.headerLength + Int(header.payloadLength)
                if buffer.count >= total {
                    let payload = Array(buffer[header.headerLength..<total])
                    buffer.removeFirst(total)
                    return (header.fin, header.opcodeValue, payload)
                }
            }
            guard fill() else { return nil }
        }
    }

    /// Reads frames until a close frame; returns its code (nil when EOF came first).
    func readCloseCode() -> UInt16? {
        while let frame = readFrame() {
            if frame.opcode == 8 { return Self.close(frame.payload).code }
        }
        return nil
    }

    /// The code (1005 when absent) and reason of a close frame's payload.
    static func close(_ payload: [UInt8]) -> (code: UInt16, reason: String) {
        guard payload.count >= 2 else { return (1005, "") }
        return (UInt16(payload[0]) << 8 | UInt16(payload[1]), String(decoding: payload[2...], as: UTF8.self))
    }

    /// This end's "ip:port", as the server sees it.
    var localAddress: String { Socket.localAddress(fd)?.description ?? "unknown" }

    /// True when the server closed the TCP connection (EOF) within the receive timeout.
    func readsEOF() -> Bool {
        while fill() {}
        return true
    }
}

/// Holds `loop` busy until the returned gate is signalled, so what is sent to its connections in
/// the meantime stays queued.
func park(_ loop: EventLoop) -> DispatchSemaphore {
    let gate = DispatchSemaphore(value: 0)
    let parked = DispatchSemaphore(value: 0)
    loop.execute {
        parked.signal()
        gate.wait()
    }
    parked.wait()
    return gate
}

/// Runs `body` with a raw client that has completed its handshake with a fresh server, and the
/// server's side of that connection.
func withRawConnection(_ body: (_ raw: RawClient, _ connection: WebSocketConnection) async throws -> Void) async throws {
    let handler = RecordingHandler()
    try await withServer(handler: handler) { _, port, _ in
        let raw = try RawClient(port: port)
        _ = raw.handshake()
        #expect(await handler.wait { $0.opened.count == 1 })
        try await body(raw, try #require(handler.opened.first))
    }
}

extension RawClient {
    /// Reads one HTTP response: its head and the Content-Length bytes of body after it.
    func readHTTPResponse() -> (head: String, body: String)? {
        guard let head = readHead() else { return nil }
        let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        guard let body = readBytes(length) else { return nil }
        return (head, String(decoding: body, as: UTF8.self))
    }
}
