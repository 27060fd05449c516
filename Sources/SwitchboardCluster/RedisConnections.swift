import Synchronization
import SwitchboardRedis
import SwitchboardTransport

/// A node's two connections to the cluster's Redis, on a loop of their own: one for commands
/// (pipelined) and one subscriber. Empty until `connect`.
final class RedisConnections: Sendable {
    private struct Connected {
        let group: EventLoopGroup
        let client: RedisClient
        let subscriber: RedisSubscriber
    }

    private let connected = Mutex<Connected?>(nil)

    /// Connects both; `handler` gets the subscriber's events on its loop.
    func connect(
        _ configuration: RedisConfiguration, handler: @escaping @Sendable (RedisSubscriberEvent) -> Void
    ) async throws {
        let group = try EventLoopGroup(threads: 1)
        do {
            let client = try await RedisClient.connect(configuration, group: group)
            do {
                let subscriber = try await RedisSubscriber.connect(configuration, group: group, handler: handler)
                connected.withLock { $0 = Connected(group: group, client: client, subscriber: subscriber) }
            } catch {
                await client.close()
                throw error
            }
        } catch {
            group.shutdown()
            throw error
        }
    }

    /// True while both connections are up.
    var isConnected: Bool {
        connected.withLock { $0.map { $0.client.isConnected && $0.subscriber.isConnected } ?? false }
    }

    /// Publishes `payload` to `channel` behind everything published before (pipelined, in call
    /// order); `failed` is told when it did not reach Redis.
    func publish(_ payload: [UInt8], to channel: RedisChannel, failed: @escaping @Sendable (RedisError) -> Void) {
        guard let client = connected.withLock({ $0?.client }) else { return failed(.closed) }
        client.send(bytes: [Self.publishCommand, channel.name, payload]) { result in
            if case .failure(let error) = result { failed(error) }
        }
    }

    /// Publishes `payload` to `channel` and returns how many subscribers (nodes) got it.
    func publish(_ payload: [UInt8], to channel: RedisChannel) async throws(RedisError) -> Int64 {
        guard let client = connected.withLock({ $0?.client }) else { throw .closed }
        let reply = try await client.send(bytes: [Self.publishCommand, channel.name, payload])
        return reply.integer ?? 0
    }

    /// Sends one command and returns its reply.
    func send(_ arguments: [[UInt8]]) async throws(RedisError) -> RESPValue {
        guard let client = connected.withLock({ $0?.client }) else { throw .closed }
        return try await client.send(bytes: arguments)
    }

    /// Runs `script` on `keys` and `arguments`.
    func run(_ script: RedisScript, keys: [[UInt8]], arguments: [[UInt8]]) async throws(RedisError) -> RESPValue {
        guard let client = connected.withLock({ $0?.client }) else { throw .closed }
        return try await client.run(script, keys: keys, arguments: arguments)
    }

    /// Runs `script` behind every command sent before it (pipelined, in call order); `answered`
    /// gets its reply on the client's loop.
    func run(
        _ script: RedisScript, keys: [[UInt8]], arguments: [[UInt8]],
        answered: @escaping @Sendable (Result<RESPValue, RedisError>) -> Void
    ) {
        guard let client = connected.withLock({ $0?.client }) else { return answered(.failure(.closed)) }
        client.evaluate(script, keys: keys, arguments: arguments, answered: answered)
    }

    /// Subscribes to `channel`, returning once Redis confirmed it.
    func subscribe(_ channel: RedisChannel) async throws(RedisError) {
        guard let subscriber = connected.withLock({ $0?.subscriber }) else { throw .closed }
        try await subscriber.subscribe([channel])
    }

    /// Unsubscribes from `channel`.
    func unsubscribe(_ channel: RedisChannel) async {
        guard let subscriber = connected.withLock({ $0?.subscriber }) else { return }
        await subscriber.unsubscribe([channel])
    }

    /// Closes both connections and their loop.
    func close() async {
        guard let taken = connected.withLock({ state -> Connected? in
            defer { state = nil }
            return state
        }) else { return }
        await taken.subscriber.close()
        await taken.client.close()
        taken.group.shutdown()
    }

    private static let publishCommand = Array("PUBLISH".utf8)
}
