import Foundation
import Synchronization
import SwitchboardTestKit
import SwitchboardTransport

/// Records every callback; optionally echoes messages back, at once or (as a server's request
/// loop answers) a moment later from another thread.
final class RecordingHandler: WebSocketHandler {
    struct Closed: Equatable {
        let id: UInt64
        let code: WebSocketCloseCode?
        let reason: String
    }

    struct Log {
        var opened: [WebSocketConnection] = []
        var messages: [(id: UInt64, message: WebSocketMessage)] = []
        var closed: [Closed] = []
    }

    let echo: Bool
    let echoFromAnotherThread: Bool
    let log = Mutex(Log())
    private let answers = DispatchQueue(label: "RecordingHandler.answers")

    init(echo: Bool = false, fromAnotherThread: Bool = false) {
        self.echo = echo
        self.echoFromAnotherThread = fromAnotherThread
    }

    func webSocketOpened(_ connection: WebSocketConnection) {
        log.withLock { $0.opened.append(connection) }
    }

    func webSocket(_ connection: WebSocketConnection, received message: WebSocketMessage) {
        log.withLock { $0.messages.append((connection.id, message)) }
        guard echo else { return }
        let answer = { @Sendable in
            switch message {
            case .text(let text): connection.sendText(text)
            case .binary(let bytes): connection.sendBinary(bytes)
            }
        }
        if echoFromAnotherThread {
            answers.asyncAfter(deadline: .now() + .milliseconds(1)) { _ = answer() }
        } else {
            _ = answer()
        }
    }

    func webSocketClosed(_ connection: WebSocketConnection, code: WebSocketCloseCode?, reason: String) {
        log.withLock { $0.closed.append(Closed(id: connection.id, code: code, reason: reason)) }
    }

    var opened: [WebSocketConnection] { log.withLock { $0.opened } }
    var closed: [Closed] { log.withLock { $0.closed } }
    func messages(for id: UInt64) -> [WebSocketMessage] {
        log.withLock { $0.messages.filter { $0.id == id }.map(\.message) }
    }

    /// Polls `condition` every few milliseconds for at most `timeout`; returns whether it held.
    @discardableResult
    func wait(timeout: Duration = Patience.standard, _ condition: (Log) -> Bool) async -> Bool {
        await eventually(within: timeout) { log.withLock { condition($0) } }
    }
}

/// Collects what a server reports through `Configuration.onRefusal`.
final class RefusalRecorder: Sendable {
    private let lines = Mutex<[String]>([])

    /// Pass as `onRefusal`.
    var record: @Sendable (String, String) -> Void {
        { [self] address, reason in lines.withLock { $0.append("\(address): \(reason)") } }
    }

    /// Every refusal so far, as "address: reason".
    var all: [String] { lines.withLock { $0 } }
}


/// Runs `body` against a started server on 127.0.0.1 with its own two-thread group, and tears
/// everything down afterwards.
@discardableResult
func withServer<R>(
    _ configuration: WebSocketServer.Configuration = .init(),
    handler: RecordingHandler = RecordingHandler(echo: true),
    _ body: (_ server: WebSocketServer, _ port: Int, _ group: EventLoopGroup) async throws -> R
) async throws -> R {
    let group = try EventLoopGroup(threads: 2)
    let server = WebSocketServer(configuration: configuration, group: group, handler: handler)
    let port: Int
    do {
        port = try server.start()
    } catch {
        group.shutdown()
        throw error
    }
    do {
        let result = try await body(server, port, group)
        server.stop()
        group.shutdown()
        return result
    } catch {
        server.stop()
        group.shutdown()
        throw error
    }
}
