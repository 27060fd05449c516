import Foundation
import SwitchboardCore

/// The base64 and length limits shared by both token formats.
enum TokenEncoding {
    /// The longest token string accepted, in bytes; real tokens are a few hundred.
    static let maxTokenByteCount = 8 * 1024

    /// Refuses a token longer than `maxTokenByteCount` before anything of it is decoded.
    static func checkLength(_ token: String) throws(RtmError) {
        guard token.utf8.count <= maxTokenByteCount else {
            throw TokenReader.malformed("longer than \(maxTokenByteCount) bytes")
        }
    }

    /// Decodes standard (padded) base64, throwing a malformed-token error on anything else.
    static func base64Decode(_ text: Substring) throws(RtmError) -> [UInt8] {
        guard let data = Data(base64Encoded: String(text)) else { throw TokenReader.malformed("bad base64") }
        return [UInt8](data)
    }

    /// Encodes as standard padded base64.
    static func base64Encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }
}
