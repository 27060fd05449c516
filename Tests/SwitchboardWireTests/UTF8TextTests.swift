import SwitchboardTestKit
import SwitchboardWire
import Testing

/// `UTF8Text.decodedIfValid`, what Apple platforms validate UTF-8 with (the standard library's
/// `String(validating:as:)` needs macOS 15 / iOS 18), against that initializer.
@Suite(.timeLimit(.minutes(1))) struct UTF8TextTests {
    @Test(arguments: [
        "", "hello", "grüße", "日本語", "emoji 🎉 and a flag 🇯🇵", "\u{FFFD} stands for itself", "nul \u{0} inside",
        "\u{10FFFF} and \u{E000}",
    ])
    func validTextComesBackAsItWas(_ text: String) {
        #expect(UTF8Text.decodedIfValid(Array(text.utf8)) == text)
        #expect(UTF8Text.string(Array(text.utf8)) == text)
    }

    @Test(arguments: [
        [0x80] as [UInt8],  // a continuation byte alone
        [0xC3],  // a lead byte with nothing after it
        [0x61, 0xE6, 0x97],  // a three-byte sequence cut short
        [0xC0, 0xAF],  // an overlong "/"
        [0xE0, 0x80, 0xAF],  // an overlong "/" in three bytes
        [0xED, 0xA0, 0x80],  // a surrogate (U+D800)
        [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
        [0xFF], [0xFE, 0xFF],
        [0x68, 0x69, 0xEF, 0xBF],  // U+FFFD's own bytes, cut short
    ])
    func invalidBytesAreRefused(_ bytes: [UInt8]) {
        #expect(UTF8Text.decodedIfValid(bytes) == nil)
        #expect(UTF8Text.string(bytes) == nil)
    }

    /// Random byte strings, mostly pieces of valid UTF-8 with a byte changed now and then: the
    /// stand-in agrees with the standard library on every one.
    @Test func agreesWithTheStandardLibraryOnRandomBytes() {
        var random = SeededGenerator(seed: 0x5EED_7E47)
        let pieces = ["a", "é", "€", "𝄞", "\u{FFFD}", "z"].map { Array($0.utf8) }
        var valid = 0
        for _ in 0..<5_000 {
            var bytes: [UInt8] = []
            for _ in 0..<random.next(below: 8) { bytes += pieces[random.next(below: pieces.count)] }
            if !bytes.isEmpty && random.next(below: 3) == 0 {
                bytes[random.next(below: bytes.count)] = UInt8(truncatingIfNeeded: random.next())
            }
            let expected = String(validating: bytes, as: UTF8.self)
            if expected != nil { valid += 1 }
            #expect(UTF8Text.decodedIfValid(bytes) == expected, "\(bytes)")
        }
        // Both kinds were tried.
        #expect(valid > 1_000 && valid < 4_900)
    }

    /// The ASCII check before validation: text of every length around its 8-byte steps, with a
    /// byte of 0x80 or above at each position (alone, or starting a valid or an invalid
    /// sequence), is judged as the standard library judges it.
    @Test func theASCIIStepJudgesEveryPositionAsTheStandardLibrary() {
        for length in 0...33 {
            let ascii = (0..<length).map { UInt8(0x20 + $0 % 0x5F) }
            #expect(ascii.withUnsafeBufferPointer(UTF8Text.isValid))
            #expect(ascii.withUnsafeBytes(UTF8Text.isASCII))
            for position in 0..<length {
                for high: UInt8 in [0x80, 0xC3, 0xFF, 0x7F] {
                    var bytes = ascii
                    bytes[position] = high
                    // After 0xC3 a continuation byte makes "é", valid.
                    if high == 0xC3 && position + 1 < length { bytes[position + 1] = 0xA9 }
                    let expected = String(validating: bytes, as: UTF8.self) != nil
                    #expect(bytes.withUnsafeBufferPointer(UTF8Text.isValid) == expected, "\(bytes)")
                    #expect(bytes.withUnsafeBytes(UTF8Text.isASCII) == (high == 0x7F), "\(bytes)")
                }
            }
        }
    }
}
