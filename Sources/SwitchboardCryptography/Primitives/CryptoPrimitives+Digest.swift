import COpenSSL

extension CryptoPrimitives {
    /// The SHA-256 digest of `data`.
    public static func sha256(_ data: [UInt8]) -> [UInt8] {
        digest(data, EVP_sha256(), byteCount: sha256ByteCount, name: "SHA-256")
    }

    /// The SHA-1 digest of `data`: for the WebSocket accept key (RFC 6455), not for anything that
    /// needs collision resistance.
    public static func sha1(_ data: [UInt8]) -> [UInt8] {
        digest(data, EVP_sha1(), byteCount: sha1ByteCount, name: "SHA-1")
    }

    /// The `byteCount`-byte digest of `data` by OpenSSL's `algorithm` (`name` for the failure).
    private static func digest(_ data: [UInt8], _ algorithm: OpaquePointer?, byteCount: Int, name: String) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let status = withNonNullPointer(data) { pointer, count in
            digest.withUnsafeMutableBufferPointer {
                EVP_Digest(pointer, count, $0.baseAddress, &length, algorithm, nil)
            }
        }
        precondition(status == 1 && length == UInt32(byteCount), "EVP_Digest(\(name)) failed")
        return digest
    }

    /// The HMAC-SHA256 of `message` under `key` (any key length, including empty).
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: sha256ByteCount)
        var length: UInt32 = 0
        let result = withNonNullPointer(key) { keyPointer, keyCount in
            withNonNullPointer(message) { messagePointer, messageCount in
                mac.withUnsafeMutableBufferPointer {
                    HMAC(
                        EVP_sha256(), keyPointer, Int32(keyCount), messagePointer, messageCount,
                        $0.baseAddress, &length)
                }
            }
        }
        precondition(result != nil && length == UInt32(sha256ByteCount), "HMAC(SHA-256) failed")
        return mac
    }
}
