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

    /// A `007` token with an RTC service for the stream channel `channelName` and `userId`, with
    /// the join-channel privilege; both last `expireSeconds` after `issuedAt` (0: never expire).
    public static func mint007StreamChannel(
        appId: String, appCertificate: String, channelName: String, userId: String, issuedAt: UInt32,
        expireSeconds: UInt32, salt: UInt32
    ) throws(RtmError) -> String {
        let rtc = TokenService(
            privileges: [TokenVerifier.rtcJoinChannelPrivilege: expireSeconds],
            fields: .rtc(channelName: channelName, uid: userId))
        return try AccessToken007.build(
            appId: appId, appCertificate: appCertificate, issueTs: issuedAt, expire: expireSeconds, salt: salt,
            services: [rtc])
    }

    /// A `006` token for joining the stream channel `channelName` as `userId`, its join privilege
    /// ending at `joinExpiresAt` (Unix seconds; 0 = never). Throws `.invalidAppId` unless `appId`
    /// is 32 characters.
    public static func mint006StreamChannel(
        appId: String, appCertificate: String, channelName: String, userId: String, salt: UInt32, ts: UInt32,
        joinExpiresAt: UInt32
    ) throws(RtmError) -> String {
        try AccessToken006.build(
            appId: appId, appCertificate: appCertificate, channelName: channelName, uid: userId, salt: salt, ts: ts,
            privileges: [TokenVerifier.rtcJoinChannelPrivilege: joinExpiresAt])
    }

    /// The token `request` asks for, signed with `appCertificate`, issued at `now` (Unix seconds).
    public static func mint(_ request: MintToken, appCertificate: String, now: UInt32, salt: UInt32) throws(RtmError) -> MintedToken {
        let expire = request.expireSeconds
        let (expiresAt, overflowed) = now.addingReportingOverflow(expire)
        guard !overflowed else {
            throw RtmError(.invalidParameter, operation: MintToken.operation, reason: "expireSeconds \(expire) runs past 2106")
        }
        let ends: UInt32 = expire == 0 ? 0 : expiresAt
        // The reference's 006 builder writes now + 24 h as the token's own timestamp.
        let ts = now &+ 24 * 3600
        let token: String
        switch (request.format, request.streamChannel) {
        case (.v007, nil):
            token = try mint007(
                appId: request.appId, appCertificate: appCertificate, userId: request.userId, issuedAt: now,
                expireSeconds: expire, salt: salt)
        case (.v007, let channel?):
            token = try mint007StreamChannel(
                appId: request.appId, appCertificate: appCertificate, channelName: channel, userId: request.userId,
                issuedAt: now, expireSeconds: expire, salt: salt)
        case (.v006, nil):
            token = try mint006(
                appId: request.appId, appCertificate: appCertificate, userId: request.userId, salt: salt, ts: ts,
                loginExpiresAt: ends)
        case (.v006, let channel?):
            token = try mint006StreamChannel(
                appId: request.appId, appCertificate: appCertificate, channelName: channel, userId: request.userId,
                salt: salt, ts: ts, joinExpiresAt: ends)
        }
        return MintedToken(token: token, expiresAt: expire == 0 ? nil : UInt64(expiresAt))
    }
}
