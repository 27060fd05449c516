import COpenSSL
import Glibc

/// One TLS connection as a pure engine over memory buffers: feed it the ciphertext that
/// arrived, take plaintext out; give it plaintext, take the ciphertext to send. OpenSSL never
/// touches a socket, so a non-blocking event loop can drive it.
///
/// Thread safety: an `SSL` object must not be used by two threads at once, so this class is
/// deliberately not `Sendable`. Create it and use it on one thread (the connection's event
/// loop); the shared `TLSContext` behind it is safe to share.
public final class TLSSession {
    /// What a call to `read(into:)` produced.
    public enum ReadResult: Equatable, Sendable {
        /// This many plaintext bytes were written to the buffer.
        case bytes(Int)
        /// No complete record is buffered: feed more ciphertext.
        case needMoreInput
        /// The peer ended the session (TLS close_notify).
        case closed
    }

    private let ssl: OpaquePointer
    private let inbound: OpaquePointer
    private let outbound: OpaquePointer
    /// The side this session plays.
    public let role: TLSContext.Role
    /// True once the handshake has completed.
    public private(set) var isHandshakeComplete = false

    /// A session for `context`. A client session verifies the server's certificate against
    /// `peerHost` (a DNS name or an IP address literal, required) and sends it as SNI when it is
    /// a name; a server session ignores `peerHost`.
    public init(context: TLSContext, peerHost: String? = nil) throws(TLSError) {
        ERR_clear_error()
        role = context.role
        guard let ssl = SSL_new(context.pointer) else {
            throw TLSError.fromQueue(.configuration, "cannot create a TLS session")
        }
        guard let inbound = BIO_new(BIO_s_mem()), let outbound = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw TLSError.fromQueue(.configuration, "cannot create TLS buffers")
        }
        // The SSL object owns both BIOs from here on and frees them in SSL_free.
        SSL_set_bio(ssl, inbound, outbound)
        self.ssl = ssl
        self.inbound = inbound
        self.outbound = outbound
        switch context.role {
        case .server:
            SSL_set_accept_state(ssl)
        case .client:
            guard let peerHost, !peerHost.isEmpty else {
                throw TLSError(.configuration, "a client session needs the server's host name")
            }
            try expect(host: peerHost)
            SSL_set_connect_state(ssl)
        }
    }

    deinit { SSL_free(ssl) }

    private func expect(host: String) throws(TLSError) {
        if Self.isIPAddress(host) {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 else {
                throw TLSError.fromQueue(.configuration, "cannot verify against address \(host)")
            }
            return
        }
        guard SSL_set1_host(ssl, host) == 1 else {
            throw TLSError.fromQueue(.configuration, "cannot verify against host name \(host)")
        }
        guard switchboard_SSL_set_tlsext_host_name(ssl, host) == 1 else {
            throw TLSError.fromQueue(.configuration, "cannot send host name \(host)")
        }
    }

    private static func isIPAddress(_ host: String) -> Bool {
        var buffer = in6_addr()
        return inet_pton(AF_INET, host, &buffer) == 1 || inet_pton(AF_INET6, host, &buffer) == 1
    }

    /// Buffers ciphertext received from the peer.
    public func feed(_ ciphertext: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < ciphertext.count {
            let chunk = min(ciphertext.count - offset, Int(Int32.max))
            let written = BIO_write(inbound, ciphertext.baseAddress! + offset, Int32(chunk))
            guard written > 0 else { return }
            offset += Int(written)
        }
    }

    /// Advances the handshake with what was fed; returns true once it is complete. Ciphertext
    /// to send may be waiting afterwards, whether it succeeded or failed (alerts).
    public func handshake() throws(TLSError) -> Bool {
        guard !isHandshakeComplete else { return true }
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            isHandshakeComplete = true
            return true
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return false
        default:
            throw failure("in the handshake")
        }
    }

    /// Decrypts buffered records into `buffer`. Call until it returns `.needMoreInput`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(TLSError) -> ReadResult {
        guard buffer.count > 0 else { return .needMoreInput }
        ERR_clear_error()
        let result = SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max))))
        if result > 0 { return .bytes(Int(result)) }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .needMoreInput
        case SSL_ERROR_ZERO_RETURN:
            return .closed
        default:
            throw failure("reading")
        }
    }

    /// Encrypts all of `plaintext`; the records then wait in `takeCiphertext()`. Only after the
    /// handshake.
    public func write(_ plaintext: UnsafeRawBufferPointer) throws(TLSError) {
        var offset = 0
        while offset < plaintext.count {
            ERR_clear_error()
            let chunk = min(plaintext.count - offset, 1 << 30)
            let result = SSL_write(ssl, plaintext.baseAddress! + offset, Int32(chunk))
            guard result > 0 else { throw failure("writing") }
            offset += Int(result)
        }
    }

    /// Queues a close_notify alert, telling the peer no more data follows.
    public func close() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    /// Bytes of ciphertext waiting to be sent.
    public var pendingCiphertextCount: Int { Int(BIO_ctrl_pending(outbound)) }

    /// Removes and returns the ciphertext waiting to be sent (empty when there is none).
    public func takeCiphertext() -> [UInt8] {
        let count = pendingCiphertextCount
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let read = BIO_read(outbound, buffer.baseAddress, Int32(min(count, Int(Int32.max))))
            initialized = max(0, Int(read))
        }
    }

    /// The negotiated protocol ("TLSv1.3", "TLSv1.2"), once the handshake is complete.
    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// The error for a failed call: a certificate rejection when verification failed, the
    /// OpenSSL error queue otherwise.
    private func failure(_ operation: String) -> TLSError {
        if role == .client, !isHandshakeComplete {
            let verdict = SSL_get_verify_result(ssl)
            if verdict != Int(X509_V_OK) {
                ERR_clear_error()
                return TLSError(.certificate, String(cString: X509_verify_cert_error_string(verdict)))
            }
        }
        return TLSError.fromQueue(.connection, operation)
    }
}
