import SwitchboardCore

/// RTC tokens for joining a stream channel, in both formats Agora application servers issue.
///
/// A 007 token needs an RTC service (type 1) for the channel, with the join-channel privilege (1)
/// and the user's id as its uid; a 006 token is signed over the channel name and the uid and
/// carries the join-channel privilege (1). In both, an empty uid (RTC uid 0) admits any user.
extension TokenVerifier {
    /// The RTC privilege that allows joining a channel, in 006 and 007 alike.
    static let rtcJoinChannelPrivilege: UInt16 = 1

    /// Verifies that `token` lets `userId` of `appId` join the stream channel `channelName` at
    /// `now` (Unix seconds). Throws `.invalidAppId` when the app is not configured,
    /// `.loginInconsistentAppId` when the token is another app's (as a login does); `.invalidToken` when it is malformed, wrongly signed, for another channel or
    /// user, or without the join privilege; `.tokenExpired` when it or its privilege has expired.
    public func verifyChannelJoin(
        token: String, appId: String, userId: String, channelName: String, now: UInt64
    ) throws(RtmError) -> ChannelJoinGrant {
        guard let certificate = credentials[appId] else {
            throw Self.joinError(.invalidAppId, "appId is not configured on this server")
        }
        let expiresAt: UInt64?
        do throws(RtmError) {
            if token.hasPrefix(AccessToken007.version) {
                expiresAt = try Self.joinExpiry007(
                    try AccessToken007(parsing: token), appId: appId, certificate: certificate, userId: userId,
                    channelName: channelName)
            } else if token.hasPrefix(AccessToken006.version) {
                expiresAt = try Self.joinExpiry006(
                    try AccessToken006(parsing: token), appId: appId, certificate: certificate, userId: userId,
                    channelName: channelName)
            } else {
                throw Self.joinError(.invalidToken, "unknown token format")
            }
        } catch {
            throw Self.joinError(error.code, error.reason)
        }
        if let expiresAt, now >= expiresAt {
            throw Self.joinError(.tokenExpired, "token expired at \(expiresAt)")
        }
        return ChannelJoinGrant(expiresAt: expiresAt)
    }

    private static func joinExpiry007(
        _ token: AccessToken007, appId: String, certificate: String, userId: String, channelName: String
    ) throws(RtmError) -> UInt64? {
        guard token.appId == appId else { throw joinError(.loginInconsistentAppId, "token was issued for another appId") }
        guard CryptoPrimitives.constantTimeEquals(token.signature, token.expectedSignature(appCertificate: certificate)) else {
            throw joinError(.invalidToken, "token signature does not match")
        }
        guard let rtc = token.services[TokenService.rtcType], case .rtc(let tokenChannel, let uid) = rtc.fields else {
            throw joinError(.invalidToken, "token has no RTC service")
        }
        guard tokenChannel == channelName else { throw joinError(.invalidToken, "token was issued for another channel") }
        guard uid.isEmpty || uid == userId else { throw joinError(.invalidToken, "token was issued for another user") }
        guard let privilege = rtc.privileges[rtcJoinChannelPrivilege] else {
            throw joinError(.invalidToken, "token has no join-channel privilege")
        }
        return [token.expire, privilege].filter { $0 != 0 }.map { UInt64(token.issueTs) + UInt64($0) }.min()
    }

    private static func joinExpiry006(
        _ token: AccessToken006, appId: String, certificate: String, userId: String, channelName: String
    ) throws(RtmError) -> UInt64? {
        guard token.appId == appId else { throw joinError(.loginInconsistentAppId, "token was issued for another appId") }
        guard token.channelNameCRC == TokenCompression.crc32(Array(channelName.utf8)) else {
            throw joinError(.invalidToken, "token was issued for another channel")
        }
        let uid = token.uidCRC == TokenCompression.crc32([]) ? "" : userId
        guard token.uidCRC == TokenCompression.crc32(Array(uid.utf8)) else {
            throw joinError(.invalidToken, "token was issued for another user")
        }
        let expected = token.expectedSignature(appCertificate: certificate, channelName: channelName, uid: uid)
        guard CryptoPrimitives.constantTimeEquals(token.signature, expected) else {
            throw joinError(.invalidToken, "token signature does not match")
        }
        guard let privilege = token.privileges[rtcJoinChannelPrivilege] else {
            throw joinError(.invalidToken, "token has no join-channel privilege")
        }
        return privilege == 0 ? nil : UInt64(privilege)
    }

    private static func joinError(_ code: RtmErrorCode, _ reason: String) -> RtmError {
        RtmError(code, operation: VerifyChannelJoinToken.operation, reason: reason)
    }
}
