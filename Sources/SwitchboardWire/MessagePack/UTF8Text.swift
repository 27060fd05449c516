/// Text checked for valid UTF-8 on every platform the SDK builds for.
///
/// Linux uses the standard library's validating initializer; Apple platforms, where it needs
/// macOS 15 / iOS 18 (above the SDK's floor), decode and compare (`decodedIfValid`), as Linux
/// does too when built with `-DSWITCHBOARD_PORTABLE` (tools/check-sdk-portable-build.sh).
public enum UTF8Text {
    /// `bytes` as a string, or nil when they are not valid UTF-8.
    @inlinable
    public static func string(_ bytes: some Collection<UInt8>) -> String? {
        #if os(Linux) && !SWITCHBOARD_PORTABLE
        String(validating: bytes, as: UTF8.self)
        #else
        decodedIfValid(bytes)
        #endif
    }

    /// Whether `utf8` is valid UTF-8, checked where it lies, with no string made. ASCII (user
    /// ids, channel names, most messages) is recognised first, 8 bytes at a time, without the
    /// standard library's validating span (which cost more than the check for short text).
    public static func isValid(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        if isASCII(UnsafeRawBufferPointer(utf8)) { return true }
        #if os(Linux) && !SWITCHBOARD_PORTABLE
        return (try? UTF8Span(validating: utf8.span)) != nil
        #else
        return decodedIfValid(utf8) != nil
        #endif
    }

    /// Whether every byte of `bytes` is below 0x80: whole 8-byte words first, then the rest.
    public static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let start = bytes.baseAddress else { return true }
        let highBits: UInt64 = 0x8080_8080_8080_8080
        var offset = 0
        var seen: UInt64 = 0
        while offset + 8 <= bytes.count {
            seen |= start.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < bytes.count {
            seen |= UInt64(start.load(fromByteOffset: offset, as: UInt8.self))
            offset += 1
        }
        return seen & highBits == 0
    }

    /// `bytes` as a string, or nil when they are not valid UTF-8, with nothing newer than
    /// macOS 12 / iOS 15: decoding replaces each ill-formed sequence with U+FFFD, so the string's
    /// UTF-8 equals `bytes` exactly when nothing was replaced.
    @inlinable
    public static func decodedIfValid(_ bytes: some Collection<UInt8>) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.utf8.elementsEqual(bytes) ? text : nil
    }
}
