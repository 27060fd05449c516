import Foundation
import SwitchboardCore

/// The AES-256 key that seals metadata at rest, read from a file an operator keeps apart from
/// the data directory.
public struct StorageKey: Sendable {
    /// The 32 key bytes.
    let bytes: [UInt8]

    /// A key of exactly 32 bytes.
    public init(bytes: [UInt8]) throws(StorageKeyError) {
        guard bytes.count == 32 else { throw StorageKeyError("a storage key has 32 bytes, not \(bytes.count)") }
        self.bytes = bytes
    }

    /// The key in the file at `path`: 64 hex digits (whitespace around them ignored), or 32 raw bytes.
    public init(contentsOfFile path: String) throws(StorageKeyError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw StorageKeyError("storage key file \(path): cannot read it: \(error.localizedDescription)")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.count == 64, let decoded = Self.hexBytes(text) {
            bytes = decoded
        } else if data.count == 32 {
            bytes = Array(data)
        } else {
            throw StorageKeyError("storage key file \(path): expected 64 hex digits or 32 bytes")
        }
    }

    private static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        var result: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            result.append(byte)
        }
        return result
    }
}

/// Why a storage key cannot be used.
public struct StorageKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, naming the file.
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}
