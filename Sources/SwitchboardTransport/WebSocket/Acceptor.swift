import CLinux
import Glibc

/// The listening socket of a server: accepts every pending connection when readable and hands
/// each to the next loop of the group.
final class Acceptor: Selectable {
    let fd: Int32
    let loop: EventLoop
    private let server: WebSocketServer
    private var isClosed = false
    private var paused = false

    init(fd: Int32, loop: EventLoop, server: WebSocketServer) {
        self.fd = fd
        self.loop = loop
        self.server = server
    }

    /// Accepts per readiness event, so a connection flood cannot starve this loop's sockets;
    /// the level-triggered listener reports the rest on the next turn.
    private static let acceptBatch = 64

    func handleEvents(_ events: UInt32) {
        for _ in 0..<Self.acceptBatch where !isClosed {
            let accepted: (fd: Int32, address: SocketAddress)?
            do {
                accepted = try Socket.accept(fd)
            } catch {
                // Out of descriptors or memory: stop accepting for a moment instead of spinning.
                pause()
                return
            }
            guard let accepted else { return }
            let server = self.server
            let remote = accepted.address.description
            let clientFD = accepted.fd
            let target = server.group.next()
            target.execute { server.adopt(fd: clientFD, remoteAddress: remote, loop: target) }
        }
    }

    private func pause() {
        guard !paused else { return }
        paused = true
        loop.reregister(fd, events: 0)
        loop.schedule(after: .milliseconds(100)) { [weak self] in
            guard let self, !self.isClosed else { return }
            self.paused = false
            self.loop.reregister(self.fd, events: EPOLLIN.rawValue)
        }
    }

    func loopShuttingDown() { close() }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        loop.deregister(fd)
        Glibc.close(fd)
    }
}
