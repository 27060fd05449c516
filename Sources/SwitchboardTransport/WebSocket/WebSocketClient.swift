import Glibc

/// Opens client WebSocket connections on an `EventLoopGroup`, sharing the server's codec.
public enum WebSocketClient {
    /// Connects to `url` (`ws://host:port/path`), performs the opening handshake offering
    /// `subprotocols`, and returns the open connection; its events go to `handler` on its loop.
    /// Fails with `WebSocketClientError.timedOut` when connecting and the handshake together take
    /// longer than `timeout`, and with `.cancelled` when the calling task is cancelled first.
    public static func connect(
        to url: String, subprotocols: [String] = [], headers: [(String, String)] = [],
        timeout: Duration = .seconds(10), maxMessageBytes: Int = 64 * 1024 + 1024,
        maxOutboundBytes: Int = 4 * 1024 * 1024, closingTimeout: Duration = .seconds(2),
        group: EventLoopGroup, handler: any WebSocketHandler
    ) async throws -> WebSocketConnection {
        guard let target = WebSocketURL(url) else { throw WebSocketClientError.invalidURL(url) }
        guard !group.isShuttingDown else { throw WebSocketClientError.shutDown }
        let address: SocketAddress
        do {
            address = try SocketAddress.resolve(host: target.host, port: target.port)
        } catch {
            throw WebSocketClientError.resolutionFailed(target.host)
        }
        let fd = try Socket.makeTCP(family: address.family)
        let handshake = ClientHandshake(
            host: target.hostHeader, path: target.path, subprotocols: subprotocols, extraHeaders: headers)
        let options = ClientConnector.Options(
            timeout: timeout, maxMessageBytes: maxMessageBytes, maxOutboundBytes: maxOutboundBytes,
            closingTimeout: closingTimeout)
        let loop = group.next()
        let connector = LoopConfined<ClientConnector?>(nil, loop: loop)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let submitted = loop.submit {
                    let started = ClientConnector(
                        fd: fd, address: address, loop: loop, handshake: handshake, options: options,
                        handler: handler, continuation: continuation)
                    connector.value = started
                    started.start()
                }
                if !submitted {
                    close(fd)
                    continuation.resume(throwing: WebSocketClientError.shutDown)
                }
            }
        } onCancel: {
            loop.execute {
                connector.value?.cancel()
                connector.value = nil
            }
        }
    }
}
