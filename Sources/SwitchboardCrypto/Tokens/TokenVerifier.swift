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
    /// Throws `.invalidAppId` (-10003) when `appId` is not configured on this server;
    /// `.loginInconsistentAppId` (-10016) when the token was issued for another app id;
    /// `.invalidToken` (-10005) when the token is malformed, in an unknown format, wrongly signed,
    /// for another user or without the login privilege; `.tokenExpired` (-10009) when the token
    /// or its login privilege has expired.
    ///
    /// A token for another app gets -10016, not -10003, as in the reference: its error table
    /// keeps -10003 for an App ID that is not valid at all and -10016 for an App ID that does not
    /// match the one used to log in, and its link-state reason for it (`inconsistentAppId`, 24)
    /// reads "App ID and Token do not match".
    public func verify(token: String, appId: String, userId: String, now: UInt64) throws(RtmError) -> VerifiedToken {
        guard let certificate = credentials[appId] else {
            throw RtmError(.invalidAppId, operation: OperationName.Session.login, reason: "appId is not configured on this server")
        }
        if token.hasPrefix(AccessToken007.version) {
            return try verify007(try AccessToken007(parsing: token), appId: appId, certificate: certificate, userId: userId, now: now)
        }
        if token.hasPrefix(AccessToken006.version) {
            return try verify006(try AccessToken006(parsing: token), appId: appId, certificate: certificate, userId: userId, now: now)
        }
        throw RtmError(.invalidToken, operation: OperationName.Session.login, reason: "unknown token format")
    }

    private func verify007(
        _ token: AccessToken007, appId: String, certificate: String, userId: String, now: UInt64
    ) throws(RtmError) -> VerifiedToken {
        guard token.appId == appId else { throw Self.otherApp }
        guard CryptoPrimitives.constantTimeEquals(token.signature, token.expectedSignature(appCertificate: certificate)) else {
            throw Self.badSignature
        }
        guard let rtm = token.services[TokenService.rtmType], case .rtm(let tokenUser) = rtm.fields else {
            throw RtmError(.invalidToken, operation: OperationName.Session.login, reason: "token has no RTM service")
        }
        guard tokenUser == userId else { throw Self.otherUser }
        guard let privilege = rtm.privileges[TokenService.rtmLoginPrivilege] else { throw Self.noLoginPrivilege }
        let ends = [token.expire, privilege].filter { $0 != 0 }.map { UInt64(token.issueTs) + UInt64($0) }.min()
        return try Self.grant(.accessToken007, expiresAt: ends, now: now)
    }

    /// A 006 token names the user in one of its two name slots. The reference's builder
    /// (`RtmTokenBuilder.buildToken`) puts the account in the channel-name slot and leaves the
    /// uid empty; tokens with the account in the uid slot (as Switchboard once minted them) are
    /// taken too. The signature covers both slots concatenated, so it is the same for either;
    /// the slots' checksums say which was used.
    private func verify006(
        _ token: AccessToken006, appId: String, certificate: String, userId: String, now: UInt64
    ) throws(RtmError) -> VerifiedToken {
        guard token.appId == appId else { throw Self.otherApp }
        let account = TokenCompression.crc32(Array(userId.utf8))
        let empty = TokenCompression.crc32([])
        let expected = token.expectedSignature(appCertificate: certificate, channelName: userId, uid: "")
        guard CryptoPrimitives.constantTimeEquals(token.signature, expected) else {
            // The signature covers the account, so a token for someone else fails here; say which.
            throw token.channelNameCRC == account || token.uidCRC == account ? Self.badSignature : Self.otherUser
        }
        let namesAccount =
            (token.channelNameCRC == account && token.uidCRC == empty)
            || (token.channelNameCRC == empty && token.uidCRC == account)
        guard namesAccount else { throw Self.otherUser }
        guard let privilege = token.privileges[AccessToken006.loginPrivilege] else { throw Self.noLoginPrivilege }
        return try Self.grant(.accessToken006, expiresAt: privilege == 0 ? nil : UInt64(privilege), now: now)
    }

    private static func grant(_ format: VerifiedToken.Format, expiresAt: UInt64?, now: UInt64) throws(RtmError) -> VerifiedToken {
        if let expiresAt, now >= expiresAt {
            throw RtmError(.tokenExpired, operation: OperationName.Session.login, reason: "token expired at \(expiresAt)")
        }
        return VerifiedToken(format: format, grant: TokenGrant(loginExpiresAt: expiresAt))
    }

    private static let otherApp = RtmError(
        .loginInconsistentAppId, operation: OperationName.Session.login, reason: "token was issued for another appId")
    private static let badSignature = RtmError(.invalidToken, operation: OperationName.Session.login, reason: "token signature does not match")
    private static let otherUser = RtmError(.invalidToken, operation: OperationName.Session.login, reason: "token was issued for another user")
    private static let noLoginPrivilege = RtmError(.invalidToken, operation: OperationName.Session.login, reason: "token has no RTM login privilege")
}
