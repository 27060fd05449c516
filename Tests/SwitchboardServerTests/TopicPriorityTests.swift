import Foundation
import Glibc
import Synchronization
import Testing
import SwitchboardCore
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardWire

/// A WebSocket client on a plain blocking socket that reads only when told to, with a tiny
/// receive buffer: the server's writes to it back up as soon as it stops reading. Its calls block:
/// make them inside `BlockingWork.run`, never on the tasks that run the server.
final class StalledReader: Sendable {
    private let fd: Int32
    private let received = Mutex<[UInt8]>([])

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var small: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: Int(Patience.standard.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        // From here on a failure throws and `deinit` closes the descriptor, once.
        guard connected == 0 else { throw SocketFailure(step: "connect") }
        let request =
            "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Protocol: \(Wire.subprotocol)\r\n\r\n"
        try write(Array(request.utf8))
        while !received.withLock({ $0.containsHeaderEnd }) { try fill() }
        let head = received.withLock { buffer in
            defer { buffer.removeFirst(buffer.headerEnd) }
            return String(decoding: buffer[..<buffer.headerEnd], as: UTF8.self)
        }
        guard head.hasPrefix("HTTP/1.1 101") else { throw SocketFailure(step: "handshake") }
    }

    /// Connects on a thread of its own.
    static func connect(port: Int) async throws -> StalledReader {
        try await BlockingWork.run { try StalledReader(port: port) }
    }

    /// Reads frames until `pick` returns true for one; returns the pushes read on the way.
    func read(until pick: @escaping @Sendable (ServerFrame) -> Bool) async throws -> [Push] {
        try await BlockingWork.run { [self] in
            var pushes: [Push] = []
            while true {
                let frame = try next()
                if case .push(let push) = frame { pushes.append(push) }
                if pick(frame) { return pushes }
            }
        }
    }

    struct SocketFailure: Error { let step: String }

    /// Sends one masked binary frame.
    func send(_ frame: ClientFrame) throws {
        let payload = frame.encode()
        var bytes: [UInt8] = [0x82]
        if payload.count < 126 {
            bytes.append(0x80 | UInt8(payload.count))
        } else {
            bytes += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        bytes += mask
        bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try write(bytes)
    }

    /// Reads the next server frame (blocking, up to the standard patience per read).
    func next() throws -> ServerFrame {
        while true {
            if let (opcode, payload) = try takeFrame() {
                guard opcode == 0x2 else { continue }
                return try ServerFrame.decode(payload)
            }
            try fill()
        }
    }

    /// Ends the connection (the server sees it lost); the descriptor itself is closed by
    /// `deinit`, so it is never closed twice.
    func close() { shutdown(fd, Int32(SHUT_RDWR)) }

    deinit { Glibc.close(fd) }

    private func takeFrame() throws -> (UInt8, [UInt8])? {
        try received.withLock { buffer throws -> (UInt8, [UInt8])? in try Self.takeFrame(from: &buffer) }
    }

    private static func takeFrame(from buffer: inout [UInt8]) throws -> (UInt8, [UInt8])? {
        guard buffer.count >= 2 else { return nil }
        var length = Int(buffer[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard buffer.count >= 4 else { return nil }
            length = Int(buffer[2]) << 8 | Int(buffer[3])
            offset = 4
        } else if length == 127 {
            guard buffer.count >= 10 else { return nil }
            length = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        guard buffer.count >= offset + length else { return nil }
        let frame = (buffer[0] & 0x0F, Array(buffer[offset..<offset + length]))
        buffer.removeFirst(offset + length)
        return frame
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = recv(fd, &chunk, chunk.count, 0)
        guard count > 0 else { throw SocketFailure(step: "read") }
        received.withLock { $0 += chunk[..<count] }
    }

    private func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw SocketFailure(step: "write") }
            sent += count
        }
    }
}

extension [UInt8] {
    fileprivate var headerEnd: Int { (0..<(count - 3)).first { self[$0..<$0 + 4].elementsEqual([13, 10, 13, 10]) }.map { $0 + 4 } ?? 0 }
    fileprivate var containsHeaderEnd: Bool { count >= 4 && headerEnd > 0 }
}

/// On a backlogged connection, a topic of higher priority goes first.
@Suite(.timeLimit(.minutes(5))) struct TopicPriorityTests {
    @Test(.timeLimit(.minutes(2))) func aHighPriorityTopicOvertakesABacklogOfALowOne() async throws {
        let server = try await TestServer.start(limits: .withoutRateLimits, configure: {
            $0.maxFramesPerSecond = nil
            $0.maxOutboundBytesPerConnection = 16 * 1024 * 1024
        })
        let port = try #require(server.port)
        let group = try EventLoopGroup(threads: 1)
        let alice = try await RawClient.connect(to: server.url, group: group)
        _ = await alice.login("alice")
        alice.send(.stream(id: 2, .join(channel: "live", token: "", features: [])))
        alice.send(.stream(id: 3, .joinTopic(channel: "live", topic: "bulk", options: TopicJoinOptions(qos: .ordered, priority: .low))))
        alice.send(.stream(id: 4, .joinTopic(channel: "live", topic: "urgent", options: TopicJoinOptions(priority: .highest))))
        #expect(await alice.answer(to: 4) == .ok(id: 4))

        let bob = try await StalledReader.connect(port: port)
        defer { bob.close() }
        try bob.send(.login(id: 1, Login(appId: "test-app", userId: "bob", token: "", heartbeatInterval: 60, presenceTimeout: 60)))
        try bob.send(.stream(id: 2, .join(channel: "live", token: "", features: [])))
        try bob.send(.stream(id: 3, .subscribeTopic(channel: "live", topic: "bulk", users: ["alice"])))
        try bob.send(.stream(id: 4, .subscribeTopic(channel: "live", topic: "urgent", users: ["alice"])))
        _ = try await bob.read { $0.requestId == 4 }

        // Bob stops reading: 8,000 messages of 1,000 bytes back up behind his tiny window. The
        // kernel's send buffer takes a few MB of them (up to tcp_wmem's 4 MB); the rest wait in
        // the server, where the urgent one overtakes them.
        let bulk = 8_000
        let body = [UInt8](repeating: 7, count: 990)
        for index in 0..<bulk {
            alice.send(.stream(id: UInt32(100 + index), .publishTopicMessage(
                channel: "live", topic: "bulk", message: .binary(body + withUnsafeBytes(of: UInt32(index).bigEndian, Array.init)),
                customType: "", sendTs: 0)))
        }
        #expect(await alice.answer(to: UInt32(100 + bulk - 1), timeout: .seconds(45)) == .ok(id: UInt32(100 + bulk - 1)))
        alice.send(.stream(id: 99, .publishTopicMessage(channel: "live", topic: "urgent", message: .string("now!"), customType: "", sendTs: 0)))
        #expect(await alice.answer(to: 99) == .ok(id: 99))

        let count = Mutex(0)
        let order = try await bob.read { frame in
            count.withLock { seen in
                if frame.deliveredMessage != nil { seen += 1 }
                return seen == bulk + 1
            }
        }.compactMap { push -> MessageDelivery? in if case .message(let message) = push { message } else { nil } }
        let urgentAt = try #require(order.firstIndex { $0.channelTopic == "urgent" })
        let bulkOrder = order.filter { $0.channelTopic == "bulk" }.map { message -> Int in
            guard case .binary(let bytes) = message.payload else { return -1 }
            return bytes.suffix(4).reduce(0) { $0 << 8 | Int($1) }
        }
        #expect(bulkOrder == Array(0..<bulk), "the low-priority topic kept its order and lost nothing")
        #expect(urgentAt < bulk * 2 / 3, "the urgent message went ahead of the held bulk (it came \(urgentAt + 1)th)")
        #expect(urgentAt > 0, "the bulk already handed to the socket was not overtaken")
        alice.connection.close()
        await server.shutdown()
        group.shutdown()
    }

    @Test(.timeLimit(.minutes(2))) func pushesHeldForALostConnectionAreReplayedOnResumeExactlyOnce() async throws {
        var limits = Limits.withoutRateLimits
        limits.sessions.resumeBufferMaxMessages = 20_000
        limits.sessions.resumeBufferMaxBytes = 32 * 1024 * 1024
        let server = try await TestServer.start(limits: limits, configure: {
            $0.maxFramesPerSecond = nil
            $0.maxOutboundBytesPerConnection = 16 * 1024 * 1024
        })
        let group = try EventLoopGroup(threads: 1)
        let alice = try await RawClient.connect(to: server.url, group: group)
        _ = await alice.login("alice")
        alice.send(.stream(id: 2, .join(channel: "live", token: "", features: [])))
        alice.send(.stream(id: 3, .joinTopic(channel: "live", topic: "bulk", options: TopicJoinOptions(priority: .low))))
        alice.send(.stream(id: 4, .joinTopic(channel: "live", topic: "urgent", options: TopicJoinOptions(priority: .high))))
        #expect(await alice.answer(to: 4) == .ok(id: 4))

        let bob = try await StalledReader.connect(port: try #require(server.port))
        try bob.send(.login(id: 1, Login(appId: "test-app", userId: "bob", token: "", heartbeatInterval: 60, presenceTimeout: 60)))
        let login = Mutex<LoginAccepted?>(nil)
        _ = try await bob.read { frame in
            login.withLock { $0 = frame.loginAccepted }
            return frame.loginAccepted != nil
        }
        let grant = try #require(login.withLock { $0 })
        try bob.send(.stream(id: 2, .join(channel: "live", token: "", features: [])))
        try bob.send(.stream(id: 3, .subscribeTopic(channel: "live", topic: "bulk", users: ["alice"])))
        try bob.send(.stream(id: 4, .subscribeTopic(channel: "live", topic: "urgent", users: ["alice"])))
        let received = UInt64(try await bob.read { $0.requestId == 4 }.count)
        let bulk = 6_000
        for index in 0..<bulk {
            alice.send(.stream(id: UInt32(100 + index), .publishTopicMessage(
                channel: "live", topic: "bulk", message: .string("b\(index)" + String(repeating: ".", count: 900)),
                customType: "", sendTs: 0)))
            if index % 1_000 == 999 {
                alice.send(.stream(id: UInt32(10 + index / 1_000), .publishTopicMessage(
                    channel: "live", topic: "urgent", message: .string("u\(index / 1_000)"), customType: "", sendTs: 0)))
            }
        }
        #expect(await alice.answer(to: UInt32(100 + bulk - 1), timeout: .seconds(45)) != nil)
        // Bob's connection dies with most of it unread: held pushes are numbered for his resume.
        bob.close()
        try await Task.sleep(for: .milliseconds(200))
        let resumed = try await RawClient.connect(to: server.url, group: group)
        resumed.send(.login(id: 1, Login(
            appId: "test-app", userId: "bob", token: "", heartbeatInterval: 60, presenceTimeout: 60,
            resume: ResumeTicket(session: grant.session, secret: grant.ticket.secret, received: received))))
        let accepted = try #require(await resumed.answer(to: 1)?.loginAccepted)
        #expect(accepted.resumed)
        // Pushes already written to the dead socket are kept only up to the live resume bound
        // (128): older ones are reported lost. The held ones were numbered when the socket died,
        // so the replay is the exact rest: no gap but the reported one, no duplicate.
        let total = bulk + bulk / 1_000
        let expected = total - accepted.loss.droppedPushes
        // How many were held rather than written depends on how much the kernel's socket buffers
        // absorbed before the backlog began; whatever the split, the replay must be exact.
        #expect(accepted.loss.droppedPushes < total, "the held pushes were kept for the resume")
        let replayed = await resumed.waitFor(timeout: .seconds(45)) { client -> [MessageDelivery]? in
            let messages = client.received.compactMap(\.deliveredMessage)
            return messages.count >= expected ? messages : nil
        }
        let messages = try #require(replayed)
        // One more message comes after the whole replay: anything sent twice would be before it.
        alice.send(.stream(id: 9_999, .publishTopicMessage(channel: "live", topic: "urgent", message: .string("last"), customType: "", sendTs: 0)))
        let all = await resumed.waitFor { client -> [MessageDelivery]? in
            let messages = client.received.compactMap(\.deliveredMessage)
            return messages.last?.payload == .string("last") ? messages : nil
        }
        #expect(all?.count == expected + 1, "nothing twice")
        let numbers = { (topic: String) in
            messages.filter { $0.channelTopic == topic }.compactMap { message -> Int? in
                guard case .string(let text) = message.payload else { return nil }
                return Int(text.dropFirst().prefix { $0 != "." })
            }
        }
        let bulkOrder = numbers("bulk")
        #expect(bulkOrder == Array((bulk - bulkOrder.count)..<bulk), "the bulk tail, in order, without a gap")
        let urgentOrder = numbers("urgent")
        #expect(urgentOrder == Array((bulk / 1_000 - urgentOrder.count)..<(bulk / 1_000)))
        alice.connection.close()
        resumed.connection.close()
        await server.shutdown()
        group.shutdown()
    }
}
