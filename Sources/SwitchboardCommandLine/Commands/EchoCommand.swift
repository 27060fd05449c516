import Foundation
import SwitchboardTransport

/// `switchboard ws-echo`: a bare WebSocket echo server on the transport, with no subprotocol and
/// no login, for conformance suites (Autobahn|Testsuite cases 1–10).
public enum EchoCommand {
    static let table = OptionTable(
        command: "switchboard ws-echo",
        options: [
            OptionSpec("listen", .value, "HOST:PORT", "where to listen (default 127.0.0.1:9001)"),
            OptionSpec("max-message-bytes", .value, "N", "largest message echoed (default 67108864)"),
        ],
        footer: "prints ws://HOST:PORT once listening; runs until SIGINT or SIGTERM")

    /// Runs `ws-echo` with `arguments` until SIGINT or SIGTERM.
    public static func run(_ arguments: [String]) async throws {
        let options = try table.parse(arguments)
        if options.wantsHelp {
            print(table.help)
            return
        }
        let listen = options.value("listen") ?? "127.0.0.1:9001"
        guard let address = HostAndPort(listen) else { throw UsageError("--listen takes HOST:PORT, not '\(listen)'") }
        let (host, port) = (address.host, address.port)
        let maxText = options.value("max-message-bytes") ?? "67108864"
        guard let maxMessageBytes = Int(maxText), maxMessageBytes > 0 else {
            throw UsageError("--max-message-bytes takes a positive number, not '\(maxText)'")
        }
        let group = try EventLoopGroup(threads: 1)
        let server = WebSocketServer(
            configuration: WebSocketServer.Configuration(
                host: host, port: port, subprotocol: nil, requireSubprotocol: false,
                maxMessageBytes: maxMessageBytes, maxOutboundBytes: 2 * maxMessageBytes + 1024 * 1024),
            group: group, handler: EchoHandler())
        let bound = try server.start()
        FileHandle.standardOutput.write(Data("ws://\(host):\(bound)\n".utf8))
        let (stopped, stop) = AsyncStream<Void>.makeStream()
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM]) { stop.finish() }
        for await _ in stopped {}
        signals.stop()
        server.stop()
        group.shutdown()
    }
}

/// Sends every message back as it came: text as text, binary as binary.
struct EchoHandler: WebSocketHandler {
    func webSocketOpened(_ connection: WebSocketConnection) {}

    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        switch message {
        case .text(let text): connection.sendText(text)
        case .binary(let bytes): connection.sendBinary(bytes)
        }
    }

    func webSocketClosed(_ connection: WebSocketConnection, code: WebSocketCloseCode?, reason: String) {}
}
