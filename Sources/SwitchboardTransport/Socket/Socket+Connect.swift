import CLinux
import Glibc

extension Socket {
    /// How a non-blocking connect began.
    enum ConnectStart {
        /// Connected at once.
        case connected
        /// Under way: the handler is registered for writability and calls `finishConnect` then.
        case watching
        /// Refused at once, with this errno.
        case failed(Int32)
    }

    /// Starts connecting `fd` to `address` without blocking; when it cannot finish at once,
    /// registers `handler` on `loop` for writability, which marks the connect's end.
    static func startConnect(_ fd: Int32, to address: SocketAddress, on loop: EventLoop, handler: any Selectable) -> ConnectStart {
        let result = address.withSockAddr { Glibc.connect(fd, $0, $1) }
        if result == 0 { return .connected }
        guard errno == EINPROGRESS || errno == EINTR else { return .failed(errno) }
        do {
            try loop.register(fd, events: EPOLLOUT.rawValue, handler: handler)
            return .watching
        } catch {
            return .failed(error.code)
        }
    }

    /// Ends the watch `startConnect` began: deregisters `fd` and returns its pending error (0:
    /// connected).
    static func finishConnect(_ fd: Int32, on loop: EventLoop) -> Int32 {
        loop.deregister(fd)
        return pendingError(fd)
    }
}
