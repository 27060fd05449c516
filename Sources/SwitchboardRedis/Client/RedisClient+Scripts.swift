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
}
