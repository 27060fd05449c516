import COpenSSL

/// Why a TLS context could not be built or a TLS session failed.
public struct TLSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The broad cause, for deciding whether retrying can help.
    public enum Kind: Sendable, Equatable {
        /// A certificate, key or CA file could not be loaded, or a setting was refused.
        case configuration
        /// The peer's certificate is untrusted, expired or issued for another host name.
        case certificate
        /// The handshake or a record failed (no shared version or cipher, bad data, an alert).
        case connection
    }

    /// The broad cause.
    public let kind: Kind
    /// A human-readable reason, from OpenSSL where it gave one.
    public let reason: String

    /// An error of `kind` with `reason`.
    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// "TLS <kind> error: <reason>".
    public var description: String {
        switch kind {
        case .configuration: "TLS configuration error: \(reason)"
        case .certificate: "TLS certificate verification failed: \(reason)"
        case .connection: "TLS connection failed: \(reason)"
        }
    }

    /// An error of `kind` whose reason is `context` followed by OpenSSL's queued errors for
    /// this thread (which it clears).
    static func fromQueue(_ kind: Kind, _ context: String) -> TLSError {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return TLSError(kind, messages.isEmpty ? context : "\(context): \(messages.joined(separator: "; "))")
    }
}
