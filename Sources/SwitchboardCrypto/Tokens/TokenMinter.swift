import SwitchboardCore

/// Issues RTM login tokens the way an application server does, for development and tests.
public enum TokenMinter {
    /// A `007` (AccessToken2) token with an RTM service for `userId` and its login privilege.
    ///
    /// Both the token and the login privilege last `expireSeconds` after `issuedAt` (Unix seconds);
    /// 0 means they never expire. Throws `.invalidParameter` when a field is longer than 65535 bytes.
    public static func mint007(
        appId: String, appCertificate: String, userId: String, issuedAt: UInt32, expireSeconds: UInt32,
        salt: UInt32
    ) throws(RtmError) -> String {
        let rtm = TokenService(privileges: [TokenService.rtmLoginPrivilege: expireSeconds], fields: .rtm(userId: userId))
        return try AccessToken007.build(
            appId: appId, appCertificate: appCertificate, issueTs: issuedAt, expire: expireSeconds, salt: salt,
            services: [rtm])
    }

    /// A `006` (AccessToken) token for `userId` whose RTM login privilege ends at `loginExpiresAt`
    /// (Unix seconds; 0 = never), laid out as the reference's `RtmTokenBuilder.buildToken` lays it
    /// out: the account in the channel-name slot, the uid empty. `ts` is the token's timestamp
    /// field (the builder writes now + 24 h), carried but not checked.
    ///
    /// Throws `.invalidAppId` unless `appId` is 32 characters, the length the format requires.
    public static func mint006(
        appId: String, appCertificate: String, userId: String, salt: UInt32, ts: UInt32, loginExpiresAt: UInt32
    ) throws(RtmError) -> String {
        try AccessToken006.build(
            appId: appId, appCertificate: appCertificate, channelName: userId, uid: "", salt: salt, ts: ts,
            privileges: [AccessToken006.loginPrivilege: loginExpiresAt])
    }
}
