extension RedisClient {
    /// Runs `script` with `EVALSHA`, and with `EVAL` (which also loads it) when the server answers
    /// `NOSCRIPT`.
    public func run(_ script: RedisScript, keys: [String] = [], arguments: [String] = []) async throws(RedisError)
        -> RESPValue
    {
        try await run(script, keys: keys.map { Array($0.utf8) }, arguments: arguments.map { Array($0.utf8) })
    }

    /// Like `run(_:keys:arguments:)`, with binary-safe keys and arguments.
    public func run(_ script: RedisScript, keys: [[UInt8]], arguments: [[UInt8]]) async throws(RedisError) -> RESPValue {
        let tail = [Array(String(keys.count).utf8)] + keys + arguments
        do {
            return try await send(bytes: [Array("EVALSHA".utf8), Array(script.sha1.utf8)] + tail)
        } catch {
            guard error.replyKind == "NOSCRIPT" else { throw error }
            return try await send(bytes: [Array("EVAL".utf8), Array(script.source.utf8)] + tail)
        }
    }

    /// Queues `script` at once with `EVAL`, behind every command queued before it, and calls
    /// `answered` on the client's loop with its reply: scripts run this way one after another are
    /// pipelined and run in the order queued. `EVAL` rather than `EVALSHA`: a `NOSCRIPT` answer
    /// to one of several in flight would send it again behind those queued after it, out of order.
    public func evaluate(
        _ script: RedisScript, keys: [[UInt8]], arguments: [[UInt8]],
        answered: @escaping @Sendable (Result<RESPValue, RedisError>) -> Void
    ) {
        send(bytes: [Self.evalCommand, Array(script.source.utf8), Array(String(keys.count).utf8)] + keys + arguments, answered: answered)
    }

    private static let evalCommand = Array("EVAL".utf8)
}
