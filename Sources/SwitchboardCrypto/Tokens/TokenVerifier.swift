import SwitchboardCore

/// Checks login tokens in both formats Agora application servers issue (`006` and `007`).
///
/// A pure value: safe to share and to call from any thread or actor.
public struct TokenVerifier: Sendable {
    let credentials: [String: String]

    /// Creates a verifier for the apps in `credentials` (`appId` → app certificate).
    public init(credentials: [String: String]) {
        self.credentials = credentials
    }

    /// Whether any app is configured; with none, no token can be verified.
    public var hasCredentials: Bool { !credentials.isEmpty }

    /// Verifies that `token` lets `userId` log in to `appId` at `now` (Unix seconds) and returns
    /// what it grants. Throws as `verify` does.
    public func verifyLogin(token: String, appId: String, userId: String, now: UInt64) throws(RtmError) -> TokenGrant {
        try verify(token: token, appId: appId, userId: userId, now: now).grant
    }

    /// Verifies that `token` lets `userId` log in to `appId` at `now` (Unix seconds) and returns
    /// its format with what it grants.
    ///
    /// Throws `.invalidAppId` when `appId` is not configured or the token was issued for another
    /// app; `.invalidToken` when the token is malformed, in an unknown format, wrongly signed, for
    /// another user or without the login privilege; `.tokenExpired` when the token or its login
    /// privilege has expired.
    public func verify(token: String, appId: String, userId: String, now: UInt64) throws(RtmError) -> VerifiedToken {
        guard let certificate = credentials[appId] else {
            throw RtmError(.invalidAppId, operation: "login", reason: "appId is not configured on this server")
        }
        if token.hasPrefix(AccessToken007.version) {
            return try verify007(try AccessToken007(parsing: token), appId: appId, certificate: certificate, userId: userId, now: now)
        }
        if token.hasPrefix(AccessToken006.version) {
            return try verify006(try AccessToken006(parsing: token), appId: appId, certificate: certificate, userId: userId, now: now)
        }
        throw RtmError(.invalidToken, operation: "login", reason: "unknown token format")
    }

    private func verify007(
        _ token: AccessToken007, appId: String, certificate: String, userId: String, now: UInt64
    ) throws(RtmError) -> VerifiedToken {
        guard token.appId == appId else { throw Self.otherApp }
        guard CryptoPrimitives.constantTimeEquals(token.signature, token.expectedSignature(appCertificate: certificate)) else {
            throw Self.badSignature
        }
        guard let rtm = token.services[TokenService.rtmType], case .rtm(let tokenUser) = rtm.fields else {
            throw RtmError(.invalidToken, operation: "login", reason: "token has no RTM service")
        }
        guard tokenUser == userId else { throw Self.otherUser }
        guard let privilege = rtm.privileges[TokenService.rtmLoginPrivilege] else { throw Self.noLoginPrivilege }
        let ends = [token.expire, privilege].filter { $0 != 0 }.map { UInt64(token.issueTs) + UInt64($0) }.min()
        return try Self.grant(.accessToken007, expiresAt: ends, now: now)
    }

    private func verify006(
        _ token: AccessToken006, appId: String, certificate: String, userId: String, now: UInt64
    ) throws(RtmError) -> VerifiedToken {
        guard token.appId == appId else { throw Self.otherApp }
        let expected = token.expectedSignature(appCertificate: certificate, channelName: "", uid: userId)
        guard CryptoPrimitives.constantTimeEquals(token.signature, expected) else {
            // The signature covers the uid, so a token for someone else fails here; say which.
            throw token.uidCRC == TokenCompression.crc32(Array(userId.utf8)) ? Self.badSignature : Self.otherUser
        }
        guard token.channelNameCRC == TokenCompression.crc32([]), token.uidCRC == TokenCompression.crc32(Array(userId.utf8))
        else { throw TokenReader.malformed("channel or uid checksum does not match") }
        guard let privilege = token.privileges[AccessToken006.loginPrivilege] else { throw Self.noLoginPrivilege }
        return try Self.grant(.accessToken006, expiresAt: privilege == 0 ? nil : UInt64(privilege), now: now)
    }

    private static func grant(_ format: VerifiedToken.Format, expiresAt: UInt64?, now: UInt64) throws(RtmError) -> VerifiedToken {
        if let expiresAt, now >= expiresAt {
            throw RtmError(.tokenExpired, operation: "login", reason: "token expired at \(expiresAt)")
        }
        return VerifiedToken(format: format, grant: TokenGrant(loginExpiresAt: expiresAt))
    }

    private static let otherApp = RtmError(.invalidAppId, operation: "login", reason: "token was issued for another appId")
    private static let badSignature = RtmError(.invalidToken, operation: "login", reason: "token signature does not match")
    private static let otherUser = RtmError(.invalidToken, operation: "login", reason: "token was issued for another user")
    private static let noLoginPrivilege = RtmError(.invalidToken, operation: "login", reason: "token has no RTM login privilege")
}
