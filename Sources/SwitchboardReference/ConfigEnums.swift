/// Service area codes (`AgoraRtmAreaCode`), combinable.
public struct RtmAreaCode: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Mainland China.
    public static let CN = RtmAreaCode(rawValue: 0x0000_0001)
    /// North America.
    public static let NA = RtmAreaCode(rawValue: 0x0000_0002)
    /// Europe.
    public static let EU = RtmAreaCode(rawValue: 0x0000_0004)
    /// Asia, excluding mainland China.
    public static let AS = RtmAreaCode(rawValue: 0x0000_0008)
    /// Japan.
    public static let JP = RtmAreaCode(rawValue: 0x0000_0010)
    /// India.
    public static let IN = RtmAreaCode(rawValue: 0x0000_0020)
    /// Global.
    public static let GLOB = RtmAreaCode(rawValue: 0xFFFF_FFFF)
}

/// Client-side encryption modes (`AgoraRtmEncryptionMode`).
public enum RtmEncryptionMode: Int, Sendable, Hashable, CaseIterable, Codable {
    /// No encryption.
    case none = 0
    /// AES-128-GCM.
    case AES128GCM = 1
    /// AES-256-GCM.
    case AES256GCM = 2
}

/// Proxy types (`AgoraRtmProxyType`).
public enum RtmProxyType: Int, Sendable, Hashable, CaseIterable, Codable {
    /// No proxy.
    case none = 0
    /// HTTP proxy.
    case http = 1
    /// Cloud TCP proxy.
    case cloudTcp = 2
}

/// Transport protocol choice (`AgoraRtmProtocolType`).
public enum RtmProtocolType: Int, Sendable, Hashable, CaseIterable, Codable {
    /// TCP and UDP.
    case tcpUdp = 0
    /// TCP only.
    case tcpOnly = 1
}

/// Log levels (`AgoraRtmLogLevel`).
public enum RtmLogLevel: Int, Sendable, Hashable, CaseIterable, Codable {
    /// No log.
    case none = 0x0000
    /// Fatal, error, warning and info.
    case info = 0x0001
    /// Fatal, error and warning.
    case warn = 0x0002
    /// Fatal and error.
    case error = 0x0004
    /// Fatal only.
    case fatal = 0x0008
}
