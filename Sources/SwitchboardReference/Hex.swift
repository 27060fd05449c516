/// Bytes written and read as hexadecimal text: resume secrets, webhook signatures, script
/// digests, percent-escapes.
public enum Hex {
    /// The sixteen digits, lowercase, by value.
    public static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `bytes` as lowercase hex, two digits a byte.
    public static func lowercase<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The value of the hex digit `digit`, either case; nil for any other byte.
    public static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
