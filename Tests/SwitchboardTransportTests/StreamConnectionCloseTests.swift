import Glibc
import Synchronization
import SwitchboardTestKit
import Testing
@testable import SwitchboardTransport

/// How a client stream's end is told: a peer that closes is told as a plain close, one that
/// resets the connection as the failed read, so a log can say which (a Redis link that drops).
@Suite(.timeLimit(.minutes(1))) struct StreamConnectionCloseTests {
    /// Records the one `connectionClosed` a connection gets.
    final class CloseRecorder: StreamConnectionHandler {
        let closes = Mutex<[StreamConnectionError?]>([])
        func connection(_ connection: StreamConnection, received bytes: UnsafeRawBufferPointer) {}
        func connectionClosed(_ connection: StreamConnection, error: StreamConnectionError?) {
            closes.withLock { $0.append(error) }
        }
    }

    /// Connects to a peer that reads the first head, treats its socket with `end` and closes it;
    /// returns what the handler was told.
    func closeTold(whenThePeer end: @escaping @Sendable (Int32) -> Void) async throws -> [StreamConnectionError?] {
        let peer = try MisbehavingPeer { client in
            MisbehavingPeer.readHead(client)
            end(client)
        }
        defer { peer.stop() }
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        let recorder = CloseRecorder()
        let connection = try await StreamConnection.connect(host: "127.0.0.1", port: peer.port, on: group.next(), handler: recorder)
        #expect(connection.write(Array("hello\r\n\r\n".utf8)))
        #expect(await eventually { recorder.closes.withLock { !$0.isEmpty } })
        return recorder.closes.withLock { $0 }
    }

    @Test func aPeerThatClosesIsToldAsAPlainClose() async throws {
        let told = try await closeTold { _ in }
        #expect(told.count == 1)
        #expect(told.first == .some(nil))
    }

    @Test func aPeerThatResetsIsToldAsTheFailedRead() async throws {
        let told = try await closeTold { client in
            // Linger with no time: the close that follows sends a reset, not a FIN.
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        #expect(told == [.ioFailed(ECONNRESET)])
    }
}
