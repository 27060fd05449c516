import CLinux
import Glibc

/// The listening socket of a server: accepts every pending connection when readable and hands
/// each to `adopt` on the next loop of the group.
final class Acceptor: Selectable {
    /// Takes an accepted socket (its fd and the peer's "ip:port") on the loop it will live on.
    typealias Adopt = @Sendable (_ fd: Int32, _ remoteAddress: String, _ loop: EventLoop) -> Void

    let fd: Int32
    let loop: EventLoop
    private let group: EventLoopGroup
    private let adopt: Adopt
    private var isClosed = false
    private var paused = false

    init(fd: Int32, loop: EventLoop, group: EventLoopGroup, adopt: @escaping Adopt) {
        self.fd = fd
        self.loop = loop
        self.group = group
        self.adopt = adopt
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
            let adopt = self.adopt
            let remote = accepted.address.description
            let clientFD = accepted.fd
            let target = group.next()
            target.execute { adopt(clientFD, remote, target) }
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

extension Acceptor {
    /// Binds `host:port`, then accepts on one loop of `group`, handing each socket to `adopt`.
    /// Returns the bound port (useful with port 0) and the acceptor's slot, to close it later
    /// (`stop(_:)`). Connections that arrive before the acceptor runs wait in the listen backlog.
    static func listen(
        host: String, port: Int, group: EventLoopGroup, adopt: @escaping Adopt
    ) throws -> (port: Int, acceptor: LoopConfined<Acceptor?>) {
        guard !group.isShuttingDown else { throw SocketError("start", code: ESHUTDOWN) }
        let address = try SocketAddress.resolve(host: host, port: port)
        let fd = try Socket.listen(on: address)
        let bound = Socket.localAddress(fd)?.port ?? port
        let loop = group.next()
        let slot = LoopConfined<Acceptor?>(nil, loop: loop)
        let accepting = loop.submit {
            let acceptor = Acceptor(fd: fd, loop: loop, group: group, adopt: adopt)
            do {
                try loop.register(fd, events: EPOLLIN.rawValue, handler: acceptor)
                slot.value = acceptor
            } catch {
                Glibc.close(fd)
            }
        }
        if !accepting {
            Glibc.close(fd)
            throw SocketError("start", code: ESHUTDOWN)
        }
        return (bound, slot)
    }

    /// Closes the acceptor in `slot` on its loop, so no more connections are taken.
    static func stop(_ slot: LoopConfined<Acceptor?>) {
        slot.loop.execute {
            slot.value?.close()
            slot.value = nil
        }
    }
}
