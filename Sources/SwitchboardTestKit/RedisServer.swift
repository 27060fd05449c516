import Foundation
import Glibc

/// A redis-server of a test's own: a free loopback port, a temporary directory, nothing saved to
/// disk, `DEBUG` allowed. Stopped by its PID (and the directory removed) when `with` returns.
public actor RedisServer {
    /// The loopback port it listens on.
    public nonisolated let port: Int
    /// Its working directory, removed when it stops.
    public nonisolated let directory: URL
    private let extraArguments: [String]
    private var process: Process?

    private init(port: Int, directory: URL, extraArguments: [String]) {
        self.port = port
        self.directory = directory
        self.extraArguments = extraArguments
    }

    /// Runs `body` with a started server (started with `arguments` added), then stops it.
    public static func with<T: Sendable>(
        _ arguments: [String] = [], _ body: (RedisServer) async throws -> T
    ) async throws -> T {
        let server = try await started(arguments)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// A started server on a port of its own: the kernel's pick, picked again when another test's
    /// server took the same port between the pick and the start.
    private static func started(_ arguments: [String]) async throws -> RedisServer {
        for _ in 0..<5 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchboard-redis-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let server = RedisServer(port: try freePort(), directory: directory, extraArguments: arguments)
            do {
                try await server.start()
                return server
            } catch let error as RedisServerError where error.portTaken {
                await server.stop()
            } catch {
                await server.stop()
                throw error
            }
        }
        throw RedisServerError("redis-server found every port it was given taken")
    }

    /// Starts redis-server and waits until it accepts connections.
    public func start() async throws {
        precondition(process == nil, "redis-server is running already")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
        process.arguments =
            [
                "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", directory.path, "--enable-debug-command", "yes",
                "--logfile", directory.appendingPathComponent("redis.log").path,
            ] + extraArguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ChildProcesses.start(process)
        self.process = process
        let port = self.port
        let accepting = await eventually { Self.accepts(port: port) }
        guard accepting else { throw RedisServerError("redis-server on port \(port) did not start") }
        // Another test's server may have taken the port since it was picked: then this one could
        // not listen, and the one that accepts is the other's.
        let owner = try await BlockingWork.run { Self.processID(onPort: port) }
        if let owner, owner != process.processIdentifier {
            try await kill()
            throw RedisServerError("port \(port) is another redis-server's", portTaken: true)
        }
    }

    /// Kills redis-server with SIGKILL (a crash) and waits for it to exit.
    public func kill() async throws {
        guard let process else { return }
        self.process = nil
        Glibc.kill(process.processIdentifier, SIGKILL)
        try await BlockingWork.run { process.waitUntilExit() }
    }

    /// Stops redis-server and removes its directory. With SIGKILL: the test process blocks
    /// SIGTERM, and a child started by `Process` inherits that mask, so SIGTERM would never arrive
    /// (and nothing is saved anyway).
    public func stop() async {
        try? await kill()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops redis-server with SIGSTOP (a frozen server: connections stay open, nothing answers).
    /// (Started through `ChildProcesses`, so stopping it signals nobody in the test process.)
    public func pause() {
        if let process { Glibc.kill(process.processIdentifier, SIGSTOP) }
    }

    /// Lets a paused redis-server run again.
    public func resume() {
        if let process { Glibc.kill(process.processIdentifier, SIGCONT) }
    }

    /// A loopback port nothing listens on now (the kernel's pick), for any server a test starts
    /// that must be told its port (a `switchboard serve` admin listener, say).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RedisServerError("socket") }
        defer { close(fd) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else { throw RedisServerError("bind") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// True when something accepts a TCP connection on the loopback `port`.
    private static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// The process id the redis-server on the loopback `port` reports (`INFO server`); nil when it
    /// does not say (it wants a password, say).
    private static func processID(onPort port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        let request = Array("INFO server\r\n".utf8)
        guard connected, send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return nil }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while reply.count < 65_536 {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            reply += buffer[..<count]
            let text = String(decoding: reply, as: UTF8.self)
            if text.hasPrefix("-") { return nil }
            if let field = text.range(of: "process_id:"), let end = text[field.upperBound...].firstIndex(of: "\r") {
                return Int32(text[field.upperBound..<end])
            }
        }
        return nil
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

/// A redis-server that would not start.
public struct RedisServerError: Error, CustomStringConvertible {
    public let description: String
    /// Another server listens on its port.
    let portTaken: Bool
    init(_ description: String, portTaken: Bool = false) {
        self.description = description
        self.portTaken = portTaken
    }
}
