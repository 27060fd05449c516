import COpenSSL

/// A configured OpenSSL `SSL_CTX`, shared by every TLS session of one server or client:
/// TLS 1.2 and 1.3 only, certificate and key for a server, trusted roots for a client.
///
/// Build it once (it reads files) and hand it to every `TLSSession`; it is immutable after
/// construction and may be used from any thread.
public final class TLSContext: @unchecked Sendable {
    // Sendable proof: `pointer` is configured completely inside the factory methods, before the
    // instance is returned, and never reconfigured afterwards (no method mutates it). The only
    // later use is `SSL_new`, which OpenSSL documents as safe on a shared `SSL_CTX` from many
    // threads at once (it takes a reference with an atomic count and reads the settings; the
    // session cache and X509 store it may touch are guarded by the context's own locks).
    // `role` is an immutable `let`. `SSL_CTX_free` runs in `deinit`, when no session is being
    // created from it; sessions hold their own reference, so they may outlive this object.
    let pointer: OpaquePointer
    /// Which side of a connection the sessions of this context play.
    public let role: Role

    /// The side of the connection.
    public enum Role: Sendable, Equatable {
        /// Accepts connections and presents a certificate.
        case server
        /// Opens connections and verifies the server's certificate and host name.
        case client
    }

    private init(pointer: OpaquePointer, role: Role) {
        self.pointer = pointer
        self.role = role
    }

    deinit { SSL_CTX_free(pointer) }

    /// A server context presenting the PEM certificate chain in `certificateFile` (leaf first)
    /// with the PEM private key in `privateKeyFile`.
    public static func server(certificateFile: String, privateKeyFile: String) throws(TLSError) -> TLSContext {
        ERR_clear_error()
        let context = try make(method: TLS_server_method(), role: .server)
        guard SSL_CTX_use_certificate_chain_file(context.pointer, certificateFile) == 1 else {
            throw TLSError.fromQueue(.configuration, "cannot load certificate file \(certificateFile)")
        }
        guard SSL_CTX_use_PrivateKey_file(context.pointer, privateKeyFile, SSL_FILETYPE_PEM) == 1 else {
            throw TLSError.fromQueue(.configuration, "cannot load private key file \(privateKeyFile)")
        }
        guard SSL_CTX_check_private_key(context.pointer) == 1 else {
            throw TLSError.fromQueue(.configuration, "the private key does not match the certificate")
        }
        // Clients of this server do not resume TLS sessions, so session tickets would be wasted.
        SSL_CTX_set_num_tickets(context.pointer, 0)
        return context
    }

    /// A client context that verifies servers against the system's trusted roots, plus the PEM
    /// certificates in `caFile` when given (for self-signed development certificates). With
    /// `trustSystemRoots` false only `caFile` is trusted.
    public static func client(caFile: String? = nil, trustSystemRoots: Bool = true) throws(TLSError) -> TLSContext {
        ERR_clear_error()
        let context = try make(method: TLS_client_method(), role: .client)
        SSL_CTX_set_verify(context.pointer, SSL_VERIFY_PEER, nil)
        if trustSystemRoots {
            guard SSL_CTX_set_default_verify_paths(context.pointer) == 1 else {
                throw TLSError.fromQueue(.configuration, "cannot use the system's trusted certificates")
            }
        }
        if let caFile {
            guard SSL_CTX_load_verify_locations(context.pointer, caFile, nil) == 1 else {
                throw TLSError.fromQueue(.configuration, "cannot load CA file \(caFile)")
            }
        }
        ERR_clear_error()
        return context
    }

    private static func make(method: OpaquePointer?, role: Role) throws(TLSError) -> TLSContext {
        guard let pointer = SSL_CTX_new(method) else {
            throw TLSError.fromQueue(.configuration, "cannot create a TLS context")
        }
        let context = TLSContext(pointer: pointer, role: role)
        guard switchboard_SSL_CTX_set_min_proto_version(pointer, TLS1_2_VERSION) == 1,
            switchboard_SSL_CTX_set_max_proto_version(pointer, TLS1_3_VERSION) == 1
        else { throw TLSError.fromQueue(.configuration, "cannot limit TLS to versions 1.2 and 1.3") }
        switchboard_SSL_CTX_harden(pointer)
        return context
    }
}
