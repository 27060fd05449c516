/// The certificate and private key a server presents to serve `wss://` (TLS 1.2 and 1.3).
public struct ServerTLS: Sendable, Equatable {
    /// PEM file with the server certificate, followed by any intermediate certificates.
    public var certificatePath: String
    /// PEM file with the certificate's private key (unencrypted).
    public var keyPath: String

    /// TLS with the certificate chain in `certificatePath` and the key in `keyPath`.
    public init(certificatePath: String, keyPath: String) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
    }
}
