/// Link states (`AgoraRtmLinkState`).
public enum RtmLinkState: Int, Sendable, Hashable, CaseIterable, Codable {
    /// The initial state.
    case idle = 0
    /// Connecting.
    case connecting = 1
    /// Connected.
    case connected = 2
    /// Disconnected; the SDK is trying to reconnect.
    case disconnected = 3
    /// Suspended: the session could not be resumed in time.
    case suspended = 4
    /// Failed; the SDK stopped trying.
    case failed = 5
}

/// The operation that caused a link state change (`AgoraRtmLinkOperation`).
public enum RtmLinkOperation: Int, Sendable, Hashable, CaseIterable, Codable {
    /// Login.
    case login = 0
    /// Logout.
    case logout = 1
    /// Joining a stream channel.
    case join = 2
    /// Leaving a stream channel.
    case leave = 3
    /// The server rejected the connection.
    case serverReject = 4
    /// Automatic reconnection.
    case autoReconnect = 5
    /// Reconnected.
    case reconnected = 6
    /// No heartbeat within the timeout.
    case heartbeatTimeout = 7
    /// The server timed out.
    case serverTimeout = 8
    /// The network changed.
    case networkChange = 9
}

/// Reasons for a link state change (`AgoraRtmLinkStateChangeReason`).
public enum RtmLinkStateChangeReason: Int, Sendable, Hashable, CaseIterable, Codable {
    case unknown = 0
    case login = 1
    case loginSuccess = 2
    case loginTimeout = 3
    case loginNotAuthorized = 4
    case loginRejected = 5
    case relogin = 6
    case logout = 7
    case autoReconnect = 8
    case reconnectTimeout = 9
    case reconnectSuccess = 10
    case join = 11
    case joinSuccess = 12
    case joinFailed = 13
    case rejoin = 14
    case leave = 15
    case invalidToken = 16
    case tokenExpired = 17
    case inconsistentAppId = 18
    case invalidChannelName = 19
    case invalidUserId = 20
    case notInitialized = 21
    case rtmServiceNotConnected = 22
    case channelInstanceExceedLimitation = 23
    case operationRateExceedLimitation = 24
    case channelInErrorState = 25
    case presenceNotConnected = 26
    case sameUidLogin = 27
    case kickedOutByServer = 28
    case keepAliveTimeout = 29
    case connectionError = 30
    case presenceNotReady = 31
    case networkChange = 32
    case serviceNotSupported = 33
    case streamChannelNotAvailable = 34
    case storageNotAvailable = 35
    case lockNotAvailable = 36
    case loginTooFrequent = 37
}

/// Service types (`AgoraRtmServiceType`), combinable.
public struct RtmServiceType: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Message channels, user channels, presence, storage and lock.
    public static let message = RtmServiceType(rawValue: 1)
    /// Stream channels.
    public static let stream = RtmServiceType(rawValue: 1 << 1)
}

/// Connection states of the older connection API (`AgoraRtmClientConnectionState`).
public enum RtmClientConnectionState: Int, Sendable, Hashable, CaseIterable, Codable {
    case disconnected = 1
    case connecting = 2
    case connected = 3
    case reconnecting = 4
    case failed = 5
}

/// Reasons of the older connection API (`AgoraRtmClientConnectionChangeReason`).
public enum RtmClientConnectionChangeReason: Int, Sendable, Hashable, CaseIterable, Codable {
    case connecting = 0
    case joinSuccess = 1
    case interrupted = 2
    case bannedByServer = 3
    case joinFailed = 4
    case leaveChannel = 5
    case invalidAppId = 6
    case invalidChannelName = 7
    case invalidToken = 8
    case tokenExpired = 9
    case rejectedByServer = 10
    case settingProxyServer = 11
    case renewToken = 12
    case clientIpAddressChanged = 13
    case keepAliveTimeout = 14
    case rejoinSuccess = 15
    case changedLost = 16
    case echoTest = 17
    case clientIpAddressChangedByUser = 18
    case sameUidLogin = 19
    case tooManyBroadcasters = 20
    case licenseValidationFailure = 21
    case certificationVerifyFailure = 22
    case streamChannelNotAvailable = 23
    case inconsistentAppId = 24
    case loginSuccess = 10001
    case logout = 10002
    case presenceNotReady = 10003
}
