/// Seal values before they are written to disk (encryption at rest). Answered by the crypto
/// side when the server has a storage key; with no handler, values are stored as they are.
///
/// Each value is sealed with its own associated data (which names where the value lives, so a
/// sealed value copied to another row does not open), in order.
public struct SealAtRest: BusRequest {
    public typealias Response = [[UInt8]]
    public static let operation = OperationName.Crypto.sealAtRest.rawValue
    /// The values to seal.
    public var plaintexts: [[UInt8]]
    /// One associated data per value.
    public var associatedData: [[UInt8]]
    /// Creates the request; `associatedData` has one entry per plaintext.
    public init(plaintexts: [[UInt8]], associatedData: [[UInt8]]) {
        self.plaintexts = plaintexts
        self.associatedData = associatedData
    }
}

/// Open values sealed by `SealAtRest`. Fails with `storageOperationFailed` when one was sealed
/// under another key, with other associated data, or was changed.
public struct OpenAtRest: BusRequest {
    public typealias Response = [[UInt8]]
    public static let operation = OperationName.Crypto.openAtRest.rawValue
    /// The sealed values.
    public var sealed: [[UInt8]]
    /// The associated data each was sealed with.
    public var associatedData: [[UInt8]]
    /// Creates the request; `associatedData` has one entry per sealed value.
    public init(sealed: [[UInt8]], associatedData: [[UInt8]]) {
        self.sealed = sealed
        self.associatedData = associatedData
    }
}
