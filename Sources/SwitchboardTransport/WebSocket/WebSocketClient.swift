import Glibc
import SwitchboardCryptography

/// Opens client WebSocket connections on an `EventLoopGroup`, sharing the server's codec.
public enum WebSocketClient {
    /// Connects to `url` (`ws://host:port/path` or `wss://…`), performs the opening handshake
    /// offering `subprotocols`, and returns the open connection; its events go to `handler` on
    /// its loop. A `wss://` URL runs TLS with `tls` (a client context; the system's trusted
    /// roots when nil) and verifies the certificate against the URL's host; failing that, it
    /// throws `WebSocketClientError.tlsFailed`. `tls` is ignored for `ws://`.
    /// With `proxy`, the socket goes to the proxy, which is asked to open a tunnel to the URL's
    /// host and port with `CONNECT` (failing with `.proxyFailed` when it will not); the handshake
    /// and TLS then run inside the tunnel, and the connection's `remoteAddress` is the proxy's.
    /// With `sourceAddress`, the socket connects from that local address (a load generator spreading
    /// its connections over several loopback addresses); a bind that fails throws `SocketError`.
    /// Fails with `WebSocketClientError.timedOut` when connecting and the handshake together take
    /// longer than `timeout`, and with `.cancelled` when the calling task is cancelled first.
    public static func connect(
        to url: String, subprotocols: [String] = [], headers: [(String, String)] = [],
        timeout: Duration = .seconds(10), maxMessageBytes: Int = 64 * 1024 + 1024,
        maxOutboundBytes: Int = 4 * 1024 * 1024, closingTimeout: Duration = .seconds(2),
        tls: TLSContext? = nil, proxy: HTTPProxy? = nil, sourceAddress: String? = nil, group: EventLoopGroup,
        handler: any WebSocketHandler
    ) async throws -> WebSocketConnection {
        guard let target = WebSocketURL(url) else { throw WebSocketClientError.invalidURL(url) }
        guard !group.isShuttingDown else { throw WebSocketClientError.shutDown }
        let hop = proxy.map { (host: $0.host, port: $0.port) } ?? (host: target.host, port: target.port)
        let address: SocketAddress
        do {
            address = try SocketAddress.resolve(host: hop.host, port: hop.port)
        } catch {
            throw WebSocketClientError.resolutionFailed(hop.host)
        }
        var security: (context: TLSContext, host: String)?
        if target.secure {
            let context: TLSContext
            if let tls {
                context = tls
            } else {
                do {
                    context = try TLSContext.client()
                } catch {
                    throw WebSocketClientError.tlsFailed(error)
                }
            }
            guard context.role == .client else {
                throw WebSocketClientError.tlsFailed(TLSError(.configuration, "a client needs a client TLS context"))
            }
            security = (context, target.host)
        }
        let fd = try Socket.makeTCP(family: address.family)
        if let sourceAddress {
            do {
                try Socket.bindSource(fd, to: try SocketAddress.resolve(host: sourceAddress, port: 0))
            } catch {
                close(fd)
                throw error
            }
        }
        let handshake = ClientHandshake(
            host: target.hostHeader, path: target.path, subprotocols: subprotocols, extraHeaders: headers)
        let options = ClientConnector.Options(
            timeout: timeout, maxMessageBytes: maxMessageBytes, maxOutboundBytes: maxOutboundBytes,
            closingTimeout: closingTimeout, tls: security,
            tunnelRequest: proxy?.connectRequest(toHost: target.host, port: target.port))
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
