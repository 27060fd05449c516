import SwitchboardCore

/// The crypto side of encryption at rest: answers `SealAtRest` and `OpenAtRest` with AES-256-GCM
/// under the server's storage key, so the storage module never holds the key.
///
/// A sealed value is `0x01 (version) || nonce (12 random bytes) || ciphertext || tag (16 bytes)`,
/// authenticated together with the value's associated data (where it lives), so a value copied
/// to another row, sealed under another key, or changed in any byte does not open.
public struct AtRestSealing: Module {
    /// `"crypto-at-rest"`.
    public let name = "crypto-at-rest"
    private let key: StorageKey

    /// The version byte that starts every value sealed at rest.
    public static let version: UInt8 = 0x01

    /// Creates the module with the storage key.
    public init(key: StorageKey) { self.key = key }

    public func start(_ context: ModuleContext) async {
        let key = key.bytes
        context.bus.handle(SealAtRest.self) { request throws(RtmError) in
            try Self.each(request.plaintexts, request.associatedData, SealAtRest.operation) { value, aad throws(RtmError) in
                try Self.seal(value, aad: aad, key: key)
            }
        }
        context.bus.handle(OpenAtRest.self) { request throws(RtmError) in
            try Self.each(request.sealed, request.associatedData, OpenAtRest.operation) { value, aad throws(RtmError) in
                try Self.open(value, aad: aad, key: key)
            }
        }
    }

    /// `transform` of each value with its associated data, in order.
    private static func each(
        _ values: [[UInt8]], _ associatedData: [[UInt8]], _ operation: String,
        _ transform: ([UInt8], [UInt8]) throws(RtmError) -> [UInt8]
    ) throws(RtmError) -> [[UInt8]] {
        guard values.count == associatedData.count else {
            throw RtmError(.storageInvalidArgument, operation: operation, reason: "one associated data per value")
        }
        var result: [[UInt8]] = []
        result.reserveCapacity(values.count)
        for (value, aad) in zip(values, associatedData) { result.append(try transform(value, aad)) }
        return result
    }

    static func seal(_ plaintext: [UInt8], aad: [UInt8], key: [UInt8]) throws(RtmError) -> [UInt8] {
        let nonce = CryptoPrimitives.randomBytes(count: CryptoPrimitives.nonceByteCount)
        let body = try CryptoPrimitives.seal(mode: .AES256GCM, plaintext: plaintext, key: key, nonce: nonce, aad: aad)
        return [version] + nonce + body
    }

    static func open(_ sealed: [UInt8], aad: [UInt8], key: [UInt8]) throws(RtmError) -> [UInt8] {
        let header = 1 + CryptoPrimitives.nonceByteCount
        guard sealed.count >= header + CryptoPrimitives.tagByteCount, sealed[0] == version else {
            throw RtmError(.storageOperationFailed, operation: OpenAtRest.operation, reason: "not a value sealed at rest")
        }
        do {
            return try CryptoPrimitives.open(
                mode: .AES256GCM, ciphertextAndTag: Array(sealed[header...]), key: key, nonce: Array(sealed[1..<header]), aad: aad)
        } catch {
            throw RtmError(.storageOperationFailed, operation: OpenAtRest.operation, reason: "the value does not open: \(error.reason)")
        }
    }
}
