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

    /// Whether `utf8` is valid UTF-8, checked where it lies, with no string made.
    public static func isValid(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        #if os(Linux) && !SWITCHBOARD_PORTABLE
        (try? UTF8Span(validating: utf8.span)) != nil
        #else
        decodedIfValid(utf8) != nil
        #endif
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
