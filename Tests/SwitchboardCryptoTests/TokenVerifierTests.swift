import SwitchboardCore
import Testing

@testable import SwitchboardCrypto

private let appId = "0123456789abcdef0123456789abcdef"
private let otherAppId = "fedcba9876543210fedcba9876543210"
private let certificate = "c0ffeec0ffeec0ffeec0ffeec0ffee00"
private let verifier = TokenVerifier(credentials: [appId: certificate, otherAppId: "another certificate"])
private let issuedAt: UInt32 = 1_800_000_000

private func mint007(user: String = "alice", app: String = appId, cert: String = certificate, expire: UInt32 = 600) throws
    -> String
{
    try TokenMinter.mint007(
        appId: app, appCertificate: cert, userId: user, issuedAt: issuedAt, expireSeconds: expire, salt: 7)
}

private func mint006(user: String = "alice", app: String = appId, cert: String = certificate, expiresAt: UInt32 = issuedAt + 600)
    throws -> String
{
    try TokenMinter.mint006(appId: app, appCertificate: cert, userId: user, salt: 7, ts: issuedAt, loginExpiresAt: expiresAt)
}

private func code(of body: () throws(RtmError) -> TokenGrant) -> RtmErrorCode? {
    do {
        _ = try body()
        return nil
    } catch {
        return error.code
    }
}

private func verify(_ token: String, app: String = appId, user: String = "alice", now: UInt64 = UInt64(issuedAt))
    -> RtmErrorCode?
{
    code { () throws(RtmError) in try verifier.verifyLogin(token: token, appId: app, userId: user, now: now) }
}

@Test(.timeLimit(.minutes(1))) func mint007VerifyRoundTrip() throws {
    let verified = try verifier.verify(token: try mint007(), appId: appId, userId: "alice", now: UInt64(issuedAt) + 10)
    #expect(verified == VerifiedToken(format: .accessToken007, grant: TokenGrant(loginExpiresAt: UInt64(issuedAt) + 600)))
}

@Test(.timeLimit(.minutes(1))) func mint006VerifyRoundTrip() throws {
    let verified = try verifier.verify(token: try mint006(), appId: appId, userId: "alice", now: UInt64(issuedAt) + 10)
    #expect(verified == VerifiedToken(format: .accessToken006, grant: TokenGrant(loginExpiresAt: UInt64(issuedAt) + 600)))
}

@Test(.timeLimit(.minutes(1))) func zeroExpiryNeverExpires() throws {
    let far = UInt64(UInt32.max) + 1
    #expect(try verifier.verifyLogin(token: try mint007(expire: 0), appId: appId, userId: "alice", now: far).loginExpiresAt == nil)
    #expect(try verifier.verifyLogin(token: try mint006(expiresAt: 0), appId: appId, userId: "alice", now: far).loginExpiresAt == nil)
}

@Test(.timeLimit(.minutes(1))) func expiredTokensAreRejectedFromTheExpiryInstant() throws {
    let end = UInt64(issuedAt) + 600
    for token in [try mint007(), try mint006()] {
        #expect(verify(token, now: end - 1) == nil)
        #expect(verify(token, now: end) == .tokenExpired)
        #expect(verify(token, now: end + 1_000_000) == .tokenExpired)
    }
    #expect(RtmErrorCode.tokenExpired.rawValue == -10009)
}

@Test(.timeLimit(.minutes(1))) func wrongCertificateIsInvalidToken() throws {
    #expect(verify(try mint007(cert: "not the certificate")) == .invalidToken)
    #expect(verify(try mint006(cert: "not the certificate")) == .invalidToken)
    #expect(RtmErrorCode.invalidToken.rawValue == -10005)
}

@Test(.timeLimit(.minutes(1))) func otherUserIsInvalidToken() throws {
    #expect(verify(try mint007(user: "mallory")) == .invalidToken)
    #expect(verify(try mint006(user: "mallory")) == .invalidToken)
    #expect(verify(try mint007(), user: "alice2") == .invalidToken)
}

/// A token issued for one configured app and presented for another gets -10016
/// loginInconsistentAppId, the reference's code for an App ID that does not match ("App ID and
/// Token do not match"); -10003 invalidAppId is kept for an app this server does not serve.
@Test(.timeLimit(.minutes(1))) func tokenForAnotherAppIsInconsistentAppId() throws {
    #expect(verify(try mint007(app: otherAppId, cert: "another certificate")) == .loginInconsistentAppId)
    #expect(verify(try mint006(app: otherAppId, cert: "another certificate")) == .loginInconsistentAppId)
    #expect(RtmErrorCode.loginInconsistentAppId.rawValue == -10016)
}

@Test(.timeLimit(.minutes(1))) func appNotServedHereIsInvalidAppId() throws {
    let unknown = "99999999999999999999999999999999"
    #expect(verify(try mint007(app: unknown), app: unknown) == .invalidAppId)
    #expect(verify(try mint006(app: unknown), app: unknown) == .invalidAppId)
    #expect(RtmErrorCode.invalidAppId.rawValue == -10003)
}

@Test(.timeLimit(.minutes(1)), arguments: ["", "abc", "005" + appId + "AAAA", "008eJxTYA==", "007", "007!!!!", "007AAAA", "006", "006" + appId,
                  "006" + appId + "***", "006short", "007eJwDAAAAAAE="])
func malformedOrUnknownTokensAreInvalidToken(token: String) {
    #expect(verify(token) == .invalidToken)
}

@Test(.timeLimit(.minutes(1))) func tokenWithoutLoginPrivilegeIsInvalidToken() throws {
    let noLogin006 = try AccessToken006.build(
        appId: appId, appCertificate: certificate, channelName: "", uid: "alice", salt: 1, ts: issuedAt, privileges: [1: 0])
    #expect(verify(noLogin006) == .invalidToken)
    let rtcOnly007 = try AccessToken007.build(
        appId: appId, appCertificate: certificate, issueTs: issuedAt, expire: 600, salt: 1,
        services: [TokenService(privileges: [1: 600], fields: .rtc(channelName: "c", uid: "alice"))])
    #expect(verify(rtcOnly007) == .invalidToken)
    let rtmWithoutLogin007 = try AccessToken007.build(
        appId: appId, appCertificate: certificate, issueTs: issuedAt, expire: 600, salt: 1,
        services: [TokenService(privileges: [2: 600], fields: .rtm(userId: "alice"))])
    #expect(verify(rtmWithoutLogin007) == .invalidToken)
}

@Test(.timeLimit(.minutes(1))) func otherKnownServicesAreSkipped() throws {
    let token = try AccessToken007.build(
        appId: appId, appCertificate: certificate, issueTs: issuedAt, expire: 0, salt: 1,
        services: [
            TokenService(privileges: [1: 0], fields: .fpa),
            TokenService(privileges: [1: 0], fields: .chat(userId: "alice")),
            TokenService(privileges: [1: 0], fields: .apaas(roomUuid: "r", userUuid: "u", role: 2)),
            TokenService(privileges: [1: 300], fields: .rtm(userId: "alice")),
        ])
    #expect(try verifier.verifyLogin(token: token, appId: appId, userId: "alice", now: 0).loginExpiresAt == UInt64(issuedAt) + 300)
}

@Test(.timeLimit(.minutes(1))) func unknownServiceTypeIsMalformed() throws {
    var info = TokenWriter()
    try info.packed(Array(appId.utf8))
    info.uint32(issuedAt)
    info.uint32(600)
    info.uint32(1)
    info.uint16(2)
    info.uint16(3)  // not a service type AccessToken2 defines
    info.privilegeMap([1: 600])
    try TokenService(privileges: [1: 600], fields: .rtm(userId: "alice")).write(to: &info)
    let signature = AccessToken007.sign(appCertificate: certificate, issueTs: issuedAt, salt: 1, signingInfo: info.bytes)
    var body = TokenWriter()
    try body.packed(signature)
    body.append(raw: info.bytes)
    let token = "007" + TokenEncoding.base64Encode(TokenCompression.deflate(body.bytes))
    #expect(verify(token) == .invalidToken)
}

@Test(.timeLimit(.minutes(1))) func mint006RequiresA32CharacterAppId() {
    #expect(throws: RtmError.self) {
        try TokenMinter.mint006(appId: "short", appCertificate: certificate, userId: "a", salt: 0, ts: 0, loginExpiresAt: 0)
    }
}

@Test(.timeLimit(.minutes(1))) func cryptoActorVerifiesLogins() async throws {
    let crypto = Crypto(credentials: [appId: certificate])
    let grant = try await crypto.verifyLogin(token: try mint007(), appId: appId, userId: "alice", now: UInt64(issuedAt))
    #expect(grant.loginExpiresAt == UInt64(issuedAt) + 600)
}
