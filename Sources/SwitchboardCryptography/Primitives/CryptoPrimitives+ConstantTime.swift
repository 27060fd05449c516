import COpenSSL

extension CryptoPrimitives {
    /// Whether `lhs` and `rhs` hold the same bytes, in time that depends only on their length
    /// (`CRYPTO_memcmp`). Arrays of different lengths are unequal at once: lengths are not secret.
    public static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard !lhs.isEmpty else { return true }
        return lhs.withUnsafeBytes { l in
            rhs.withUnsafeBytes { r in
                CRYPTO_memcmp(l.baseAddress, r.baseAddress, l.count) == 0
            }
        }
    }
}
