import CLinux
import Glibc

/// Thin wrappers over the socket system calls, all on non-blocking descriptors.
enum Socket {
    /// A non-blocking, close-on-exec TCP socket for `family`.
    static func makeTCP(family: Int32) throws(SocketError) -> Int32 {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(family, type, 0)
        guard fd >= 0 else { throw SocketError("socket") }
        return fd
    }

    /// Binds `fd`, before it connects, to the source `address` (its port 0): the kernel picks the
    /// port at connect time (`IP_BIND_ADDRESS_NO_PORT`), so connections to different destinations
    /// may share one, as an unbound socket's do.
    static func bindSource(_ fd: Int32, to address: SocketAddress) throws(SocketError) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_IP), IP_BIND_ADDRESS_NO_PORT, &one, socklen_t(MemoryLayout<Int32>.size))
        guard address.withSockAddr({ bind(fd, $0, $1) }) == 0 else { throw SocketError("bind") }
    }

    /// A listening socket bound to `address`.
    static func listen(on address: SocketAddress, backlog: Int32 = 1024) throws(SocketError) -> Int32 {
        let fd = try makeTCP(family: address.family)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard address.withSockAddr({ bind(fd, $0, $1) }) == 0 else {
            let error = SocketError("bind \(address.description)")
            Glibc.close(fd)
            throw error
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let error = SocketError("listen")
            Glibc.close(fd)
            throw error
        }
        return fd
    }

    /// The local address a socket is bound to.
    static func localAddress(_ fd: Int32) -> SocketAddress? {
        var address = SocketAddress(storage: sockaddr_storage(), length: socklen_t(MemoryLayout<sockaddr_storage>.size))
        let ok = withUnsafeMutableBytes(of: &address.storage) { raw in
            getsockname(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &address.length) == 0
        }
        return ok ? address : nil
    }

    /// Accepts one pending connection: nil when none is waiting.
    static func accept(_ fd: Int32) throws(SocketError) -> (fd: Int32, address: SocketAddress)? {
        var address = SocketAddress(storage: sockaddr_storage(), length: socklen_t(MemoryLayout<sockaddr_storage>.size))
        while true {
            let client = withUnsafeMutableBytes(of: &address.storage) { raw in
                switchboard_accept4(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &address.length,
                        Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
            }
            if client >= 0 { return (client, address) }
            switch errno {
            case EINTR, ECONNABORTED: continue
            case EAGAIN, EWOULDBLOCK: return nil
            default: throw SocketError("accept")
            }
        }
    }

    /// Disables Nagle's algorithm: frames are already batched by the writer.
    static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// The pending error of a socket (used after a non-blocking connect).
    static func pendingError(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { return errno }
        return value
    }
}
