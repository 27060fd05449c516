import CLinux
import Glibc

/// An IPv4 or IPv6 socket address.
struct SocketAddress: Sendable {
    var storage: sockaddr_storage
    var length: socklen_t

    /// Resolves `host` and `port` (numeric addresses need no DNS) to the first usable address.
    static func resolve(host: String, port: Int) throws(SocketError) -> SocketAddress {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw SocketError("getaddrinfo \(host)", code: status == EAI_SYSTEM ? errno : ENOENT)
        }
        defer { freeaddrinfo(result) }
        var address = SocketAddress(storage: sockaddr_storage(), length: first.pointee.ai_addrlen)
        withUnsafeMutableBytes(of: &address.storage) { raw in
            raw.copyMemory(from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
        }
        return address
    }

    var family: Int32 { Int32(storage.ss_family) }

    /// The port number.
    var port: Int {
        // sin_port and sin6_port both sit right after the 2-byte family.
        withUnsafeBytes(of: storage) { raw in
            Int(UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self)))
        }
    }

    /// "ip:port", with brackets around IPv6 addresses.
    var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        var copy = storage
        let ok = withUnsafeMutableBytes(of: &copy) { raw -> Bool in
            if family == AF_INET6 {
                let sin6 = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                return inet_ntop(AF_INET6, &sin6.pointee.sin6_addr, &text, socklen_t(text.count)) != nil
            }
            let sin = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
            return inet_ntop(AF_INET, &sin.pointee.sin_addr, &text, socklen_t(text.count)) != nil
        }
        guard ok else { return "unknown" }
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Calls `body` with the address as a `sockaddr` pointer.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
    }
}
