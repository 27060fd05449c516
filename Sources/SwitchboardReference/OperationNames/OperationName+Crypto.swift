extension OperationName {
    /// Switchboard's own cryptographic steps, which the reference reports under its encryption
    /// and token error codes.
    public enum Crypto: String, OperationNameTable {
        /// Deriving a payload key from the client's encryption key and salt.
        case deriveKey
        /// Sealing a payload with AES-GCM.
        case seal
        /// Opening a sealed payload.
        case open
        /// Minting a token (`switchboard token`, the test builders).
        case mintToken
        /// Sealing metadata values before they are stored (encryption at rest).
        case sealAtRest
        /// Opening stored metadata values.
        case openAtRest
    }
}
