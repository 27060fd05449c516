import CZlib
import SwitchboardCore

/// zlib and CRC-32 for the token formats, bounded so hostile input cannot exhaust memory.
enum TokenCompression {
    /// The most bytes a token may inflate to; anything larger is rejected, not allocated.
    static let maxInflatedByteCount = 64 * 1024

    /// zlib-deflates `bytes` (a zlib stream with header, as Python's `zlib.compress` writes).
    static func deflate(_ bytes: [UInt8]) -> [UInt8] {
        var capacity = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(capacity))
        let status = CryptoPrimitives.withNonNullPointer(bytes) { pointer, count in
            output.withUnsafeMutableBufferPointer {
                compress2($0.baseAddress, &capacity, pointer, uLong(count), Z_DEFAULT_COMPRESSION)
            }
        }
        precondition(status == Z_OK, "compress2 failed with \(status)")
        return Array(output.prefix(Int(capacity)))
    }

    /// Inflates one complete zlib stream into at most `maxInflatedByteCount` bytes.
    ///
    /// Throws if the stream is corrupt, incomplete, followed by extra bytes or inflates past the bound.
    static func inflate(_ bytes: [UInt8]) throws(RtmError) -> [UInt8] {
        guard !bytes.isEmpty else { throw TokenReader.malformed("empty compressed body") }
        var output = [UInt8](repeating: 0, count: maxInflatedByteCount)
        var produced = uLong(maxInflatedByteCount)
        var consumed = uLong(bytes.count)
        let status = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer {
                uncompress2($0.baseAddress, &produced, input.baseAddress, &consumed)
            }
        }
        guard status == Z_OK else {
            throw TokenReader.malformed(status == Z_BUF_ERROR ? "body inflates too large or is truncated" : "bad zlib body")
        }
        guard consumed == uLong(bytes.count) else { throw TokenReader.malformed("bytes after the zlib body") }
        return Array(output.prefix(Int(produced)))
    }

    /// The CRC-32 (zlib's, as Python's `zlib.crc32`) of `bytes`.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        CryptoPrimitives.withNonNullPointer(bytes) { pointer, count in
            UInt32(truncatingIfNeeded: CZlib.crc32(0, pointer, uInt(count)))
        }
    }
}
