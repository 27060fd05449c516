import Foundation
import Glibc
import Synchronization

/// A small HTTP CONNECT proxy on 127.0.0.1 for tests: it records every request head, answers 407
/// when credentials are required and missing or wrong, and otherwise relays bytes both ways
/// between the client and the target it names. Blocking sockets, one thread per tunnel, every
/// wait bounded; `stop()` ends it all.
public final class ConnectProxy: Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    private let listener: Int32
    private let requiredAuthorization: String?
    private let state = Mutex<(heads: [String], sockets: [Int32], stopped: Bool)>(([], [], false))

    /// Starts listening; with `username`, only `Proxy-Authorization: Basic` for it is let through.
    public init(username: String? = nil, password: String = "") throws {
        requiredAuthorization = username.map { "Basic " + Data("\($0):\(password)".utf8).base64EncodedString() }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// The request heads received, in order.
    public var heads: [String] { state.withLock { $0.heads } }

    /// Closes the listener and every tunnel.
    public func stop() {
        // Under the lock, so no descriptor is closed (and its number reused) in between.
        state.withLock { state in
            state.stopped = true
            for fd in state.sockets { shutdown(fd, Int32(SHUT_RDWR)) }
        }
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0, track(client) else { break }
            Thread.detachNewThread { [self] in serve(client) }
        }
        close(listener)
    }

    /// Forgets and closes a tunnel's descriptor.
    private func release(_ fd: Int32) {
        state.withLock { state in
            state.sockets.removeAll { $0 == fd }
            close(fd)
        }
    }

    /// Remembers `fd` for `stop()`; false (closing it) when the proxy is stopping.
    private func track(_ fd: Int32) -> Bool {
        let stopped = state.withLock { state -> Bool in
            if !state.stopped { state.sockets.append(fd) }
            return state.stopped
        }
        if stopped { close(fd) }
        return !stopped
    }

    private func serve(_ client: Int32) {
        defer { release(client) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let head = readHead(client) else { return }
        state.withLock { $0.heads.append(head) }
        let lines = head.components(separatedBy: "\r\n")
        let authorization = lines.first { $0.lowercased().hasPrefix("proxy-authorization:") }
            .map { String($0.dropFirst("proxy-authorization:".count)).trimmingCharacters(in: .whitespaces) }
        if let requiredAuthorization, authorization != requiredAuthorization {
            send(client, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\n"
                + "Content-Length: 0\r\n\r\n")
            return
        }
        let parts = lines[0].split(separator: " ")
        guard parts.count == 3, parts[0] == "CONNECT", let colon = parts[1].lastIndex(of: ":"),
            let port = Int(parts[1][parts[1].index(after: colon)...])
        else {
            send(client, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            return
        }
        let target = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard track(target) else { return }
        defer { release(target) }
        var address = Self.loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(target, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            send(client, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            return
        }
        send(client, "HTTP/1.1 200 Connection Established\r\n\r\n")
        relay(client, target)
    }

    /// Copies bytes both ways until either side closes or the proxy stops.
    private func relay(_ a: Int32, _ b: Int32) {
        var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !state.withLock({ $0.stopped }) {
            guard poll(&fds, 2, 100) >= 0 else { return }
            for (index, entry) in fds.enumerated() where entry.revents != 0 {
                let from = entry.fd
                let to = index == 0 ? b : a
                let count = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { return }
                var offset = 0
                while offset < count {
                    let sent = buffer[offset..<count].withUnsafeBytes { Glibc.send(to, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    guard sent > 0 else { return }
                    offset += sent
                }
            }
        }
    }

    /// Reads up to the blank line that ends the request head; nil on EOF or timeout.
    private func readHead(_ fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < 16 * 1024 {
            guard recv(fd, &byte, 1, 0) == 1 else { return nil }
            bytes.append(byte)
            if bytes.suffix(4) == [13, 10, 13, 10] { return String(decoding: bytes.dropLast(4), as: UTF8.self) }
        }
        return nil
    }

    private func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
