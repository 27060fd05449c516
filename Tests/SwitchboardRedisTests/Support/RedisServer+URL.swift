import SwitchboardRedis
import SwitchboardTestKit
import SwitchboardTransport

extension RedisServer {
    /// The URL of this server, with `password` when given.
    nonisolated func url(password: String? = nil, database: Int = 0) -> RedisURL {
        RedisURL(host: "127.0.0.1", port: port, password: password, database: database)
    }
}

/// Runs `body` with an event loop group of one thread, shut down afterwards.
func withLoopGroup<T: Sendable>(_ body: (EventLoopGroup) async throws -> T) async throws -> T {
    let group = try EventLoopGroup(threads: 1)
    do {
        let result = try await body(group)
        try await BlockingWork.run { group.shutdown() }
        return result
    } catch {
        _ = try? await BlockingWork.run { group.shutdown() }
        throw error
    }
}

/// A string's bytes.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
