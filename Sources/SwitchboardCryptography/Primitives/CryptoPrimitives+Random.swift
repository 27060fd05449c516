import COpenSSL

extension CryptoPrimitives {
    /// Returns `count` bytes from OpenSSL's cryptographically secure generator (`RAND_bytes`).
    ///
    /// Traps if the generator cannot be seeded, as the standard library's
    /// `SystemRandomNumberGenerator` does: there is no safe way to continue without randomness.
    public static func randomBytes(count: Int) -> [UInt8] {
        precondition(count >= 0 && count <= Int(Int32.max), "randomBytes: count out of range")
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let status = bytes.withUnsafeMutableBufferPointer {
            RAND_bytes($0.baseAddress, Int32(count))
        }
        guard status == 1 else { fatalError("RAND_bytes failed: the system random generator is unavailable") }
        return bytes
    }
}
