import Synchronization
import Testing
import SwitchboardRedis
import SwitchboardTestKit
import SwitchboardTransport

/// The command client against a real redis-server (one per test, on its own loopback port).
@Suite(.timeLimit(.minutes(3))) struct RedisClientTests {
    @Test(arguments: [true, false])
    func setsAndGetsBinarySafeValues(resp3: Bool) async throws {
        try await RedisServer.with { server in
            try await withLoopGroup { group in
                let client = try await RedisClient.connect(
                    RedisConfiguration(url: server.url(), preferRESP3: resp3), group: group)
                #expect(try await client.send(["SET", "greeting", "hello"]) == .simpleString("OK"))
                #expect(try await client.send(["GET", "greeting"]) == .bulkString(bytes("hello")))
                #expect(try await client.send(["GET", "missing"]) == .null)
                let everyByte = (0...255).map { UInt8($0) } + bytes("\r\n$-1\r\n*0\r\n")
                _ = try await client.send(bytes: [bytes("SET"), [0, 13, 10, 255], everyByte])
                #expect(try await client.send(bytes: [bytes("GET"), [0, 13, 10, 255]]) == .bulkString(everyByte))
                #expect(client.isConnected)
                await client.close()
            }
        }
    }

    @Test func pipelinesTenThousandCallsAndMatchesEachReply() async throws {
        try await RedisServer.with { server in
            try await withLoopGroup { group in
                let client = try await RedisClient.connect(server.url(), group: group)
                let count = 10_000
                let mismatches = try await withThrowingTaskGroup(of: Int.self) { tasks in
                    for index in 0..<count {
                        tasks.addTask {
                            let reply = try await client.send(["ECHO", "call-\(index)"])
                            return reply == .bulkString(bytes("call-\(index)")) ? 0 : 1
                        }
                    }
                    return try await tasks.reduce(0, +)
                }
                #expect(mismatches == 0)
                // Replies in the order sent: INCRs written by one task come back counting up.
                let ordered = try await withThrowingTaskGroup(of: (Int, RESPValue).self) { tasks in
                    for index in 0..<100 { tasks.addTask { (index, try await client.send(["INCR", "counter"])) } }
                    return try await tasks.reduce(into: [Int64]()) { found, pair in
                        if case .integer(let value) = pair.1 { found.append(value) }
                    }
                }
                #expect(ordered.sorted() == Array(1...100))
                await client.close()
            }
        }
    }

    @Test func errorRepliesThrowTheirKindAndTheConnectionCarriesOn() async throws {
        try await RedisServer.with { server in
            try await withLoopGroup { group in
                let client = try await RedisClient.connect(server.url(), group: group)
                _ = try await client.send(["SET", "text", "abc"])
                await #expect(throws: RedisError.reply(kind: "WRONGTYPE", message: "Operation against a key holding the wrong kind of value")) {
                    try await client.send(["LPUSH", "text", "x"])
                }
                do throws(RedisError) {
                    _ = try await client.send(["NOSUCHCOMMAND"])
                    Issue.record("an unknown command succeeded")
                } catch {
                    #expect(error.replyKind == "ERR")
                }
                #expect(try await client.send(["PING"]) == .simpleString("PONG"))
                await client.close()
            }
        }
    }

    @Test(arguments: [true, false])
    func logsInWithAPasswordAndSelectsTheDatabase(resp3: Bool) async throws {
        try await RedisServer.with(["--requirepass", "open sesame"]) { server in
            try await withLoopGroup { group in
                do throws(RedisError) {
                    _ = try await RedisClient.connect(RedisConfiguration(url: server.url(), preferRESP3: resp3), group: group)
                    Issue.record("connected without the password")
                } catch {
                    #expect(error.replyKind == "NOAUTH")
                }
                do throws(RedisError) {
                    _ = try await RedisClient.connect(
                        RedisConfiguration(url: server.url(password: "wrong"), preferRESP3: resp3), group: group)
                    Issue.record("connected with a wrong password")
                } catch {
                    #expect(error.replyKind == "WRONGPASS")
                }
                let second = try await RedisClient.connect(
                    RedisConfiguration(url: server.url(password: "open sesame", database: 2), preferRESP3: resp3), group: group)
                let first = try await RedisClient.connect(
                    RedisConfiguration(url: server.url(password: "open sesame"), preferRESP3: resp3), group: group)
                _ = try await second.send(["SET", "where", "two"])
                #expect(try await second.send(["GET", "where"]) == .bulkString(bytes("two")))
                #expect(try await first.send(["GET", "where"]) == .null)
                await first.close()
                await second.close()
            }
        }
    }

    @Test func scriptsFallBackToEvalAfterAScriptFlush() async throws {
        try await RedisServer.with { server in
            try await withLoopGroup { group in
                let client = try await RedisClient.connect(server.url(), group: group)
                let script = RedisScript("return redis.call('INCRBY', KEYS[1], ARGV[1])")
                #expect(try await client.run(script, keys: ["n"], arguments: ["5"]) == .integer(5))
                #expect(try await client.send(["SCRIPT", "EXISTS", script.sha1]) == .array([.integer(1)]))
                _ = try await client.send(["SCRIPT", "FLUSH"])
                #expect(try await client.send(["SCRIPT", "EXISTS", script.sha1]) == .array([.integer(0)]))
                #expect(try await client.run(script, keys: ["n"], arguments: ["2"]) == .integer(7))
                #expect(try await client.send(["SCRIPT", "EXISTS", script.sha1]) == .array([.integer(1)]))
                do throws(RedisError) {
                    _ = try await client.run(RedisScript("return redis.call('NOSUCH')"))
                    Issue.record("a failing script succeeded")
                } catch {
                    #expect(error.replyKind == "ERR")
                }
                await client.close()
            }
        }
    }

    /// Scripts queued one after another without waiting run in the order queued, each answered,
    /// a script flush among them included (no `NOSCRIPT` sends one again behind later ones).
    @Test func scriptsQueuedWithoutWaitingRunInOrderAcrossAScriptFlush() async throws {
        try await RedisServer.with { server in
            try await withLoopGroup { group in
                let client = try await RedisClient.connect(server.url(), group: group)
                let script = RedisScript("redis.call('RPUSH', KEYS[1], ARGV[1]) return redis.call('LLEN', KEYS[1])")
                let replies = Mutex<[Int: RESPValue]>([:])
                let count = 2_000
                for index in 0..<count {
                    if index == count / 2 { client.send(bytes: [bytes("SCRIPT"), bytes("FLUSH")]) { _ in } }
                    client.evaluate(script, keys: [bytes("order")], arguments: [bytes("\(index)")]) { result in
                        replies.withLock { $0[index] = (try? result.get()) ?? .null }
                    }
                }
                #expect(await eventually { replies.withLock { $0.count } == count })
                // Each reply is the list's length after its own push: the scripts ran in call order.
                #expect(replies.withLock { $0 }.allSatisfy { $0.value == .integer(Int64($0.key + 1)) })
                let list = try await client.send(["LRANGE", "order", "0", "-1"])
                #expect(list == .array((0..<count).map { .bulkString(bytes("\($0)")) }))
                await client.close()
            }
        }
    }

    @Test func aCallTimesOutAndTheClientReconnects() async throws {
        try await RedisServer.with { server in
            try await withLoopGroup { group in
                let configuration = RedisConfiguration(url: server.url(), commandTimeout: .milliseconds(300))
                let client = try await RedisClient.connect(configuration, group: group)
                let started = ContinuousClock.now
                await #expect(throws: RedisError.timedOut) { try await client.send(["DEBUG", "SLEEP", "4"]) }
                // It did not wait for the reply (4 s away); the margin is for a loaded machine.
                #expect(ContinuousClock.now - started < .seconds(3.5))
                let back = await eventually {
                    client.isConnected
                }
                #expect(back)
                var answered = false
                for _ in 0..<100 where !answered {
                    answered = (try? await client.send(["PING"])) == .simpleString("PONG")
                    if !answered { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(answered)
                await client.close()
            }
        }
    }

    @Test func callsFailFastWhileRedisIsDownAndWorkOnceItIsBack() async throws {
        try await RedisServer.with { server in
            try await withLoopGroup { group in
                // Calls that waited for the link (or their timeout) would take 30 s; failing fast,
                // each takes a small fraction of it even on a busy machine.
                let configuration = RedisConfiguration(
                    url: server.url(), commandTimeout: .seconds(30),
                    backoff: RedisBackoff(initial: .milliseconds(20), maximum: .milliseconds(200)))
                let client = try await RedisClient.connect(configuration, group: group)
                _ = try await client.send(["SET", "k", "v"])
                try await server.kill()
                #expect(await eventually { !client.isConnected })
                for _ in 0..<20 {
                    let started = ContinuousClock.now
                    do throws(RedisError) {
                        _ = try await client.send(["GET", "k"])
                        Issue.record("a call succeeded with redis-server killed")
                    } catch {
                        switch error {
                        case .unavailable, .connectionLost: break
                        default: Issue.record("unexpected error \(error)")
                        }
                    }
                    #expect(ContinuousClock.now - started < .seconds(3))
                }
                try await server.start()
                #expect(await eventually { client.isConnected })
                // Nothing was saved: the restarted server is empty, and the client talks to it.
                #expect(try await client.send(["GET", "k"]) == .null)
                #expect(try await client.send(["PING"]) == .simpleString("PONG"))
                await client.close()
                await #expect(throws: RedisError.closed) { try await client.send(["PING"]) }
            }
        }
    }

    @Test func theFirstConnectionFailsWhenNothingListens() async throws {
        try await RedisServer.with { server in
            try await server.kill()
            try await withLoopGroup { group in
                do throws(RedisError) {
                    _ = try await RedisClient.connect(server.url(), group: group)
                    Issue.record("connected to a killed server")
                } catch {
                    guard case .connectFailed = error else {
                        Issue.record("unexpected error \(error)")
                        return
                    }
                }
            }
        }
    }
}
