import SwitchboardCore
import SwitchboardTestKit
import Testing

@testable import SwitchboardCrypto

/// Tokens produced outside this codebase: 006 by the reference's own builder
/// (`tools/reference_tokens.py`), 007 by an independent Python implementation written from the
/// format's description with the standard library alone (`tools/reference_007_tokens.py --vectors`,
/// which `the007VectorsAreWhatTheScriptMints` runs).
enum ReferenceTokens {
    static let appId = "970CA35de60c44645bbae8a215061b33"
    static let certificate = "5CFd2fd1755d40ecb72977518be15d3b"

    /// 006 for user "alice" from the reference's builder (`tools/reference_tokens.py APP_ID
    /// CERTIFICATE alice 1700003600 1234567 1700086400`): the account in the channel-name slot.
    static let alice006 =
        "006970CA35de60c44645bbae8a215061b33IABZw3mqWUhXED+Z7dYvKSqlMY/ludxUmOWEKmJZglrh40e8jicAAAAAEACH1hIAgEJVZQEA6AMQ/1Nl"

    /// The same token with the account in the uid slot instead, as Switchboard once minted it.
    static let alice006InUidSlot =
        "006970CA35de60c44645bbae8a215061b33IABZw3mqWUhXED+Z7dYvKSqlMY/ludxUmOWEKmJZglrh4wAAAABHvI4nEACH1hIAgEJVZQEA6AMQ/1Nl"

    /// 007 for user "alice": issueTs 1700000000, expire 3600, salt 99999, RTM login privilege 3600.
    static let alice007 =
        "007eJxTYNjX92nrnp9q7E5WDkpVe+o6vrKH/csrfClxSjdXQaDU97UCg6W5gbOjsWlKqplBsomJmYlpUlJiqkWikaGpgZlhkrExw8fgVAE+Bob5bYwMjAxMDCASxGdlSMzJTE4FAOcNHPM="

    /// 007 for user "bob": issueTs 1700000000, expire 86400, salt 42, an RTC service
    /// (channel "room", uid "bob", privilege 1 → 600) and an RTM service (login privilege 1800).
    static let bob007WithRTC =
        "007eJxTYPi6+bBjqUlYeuxiBuaV5rZ1tXN3rOpySTnB0H2xbbLRM1EFBktzA2dHY9OUVDODZBMTMxPTpKTEVItEI0NTAzPDJGNjho/BqQ2BjAxaDAwMTAyMYBjBxMDAwlCUn5/LzJCUnwQR5mBnYABzAdSLHow="

    static let verifier = TokenVerifier(credentials: [appId: certificate])
}

@Test(.timeLimit(.minutes(1))) func verifiesReference006Token() throws {
    let verified = try ReferenceTokens.verifier.verify(
        token: ReferenceTokens.alice006, appId: ReferenceTokens.appId, userId: "alice", now: 1_700_000_000)
    #expect(verified == VerifiedToken(format: .accessToken006, grant: TokenGrant(loginExpiresAt: 1_700_003_600)))
}

@Test(.timeLimit(.minutes(1))) func verifies006TokenWithTheAccountInTheUidSlot() throws {
    let grant = try ReferenceTokens.verifier.verifyLogin(
        token: ReferenceTokens.alice006InUidSlot, appId: ReferenceTokens.appId, userId: "alice", now: 1_700_000_000)
    #expect(grant.loginExpiresAt == 1_700_003_600)
}

@Test(.timeLimit(.minutes(1))) func mints006IdenticalToReference() throws {
    let token = try TokenMinter.mint006(
        appId: ReferenceTokens.appId, appCertificate: ReferenceTokens.certificate, userId: "alice",
        salt: 1_234_567, ts: 1_700_086_400, loginExpiresAt: 1_700_003_600)
    #expect(token == ReferenceTokens.alice006)
}

@Test(.timeLimit(.minutes(1))) func verifiesReference007Token() throws {
    let verified = try ReferenceTokens.verifier.verify(
        token: ReferenceTokens.alice007, appId: ReferenceTokens.appId, userId: "alice", now: 1_700_000_100)
    #expect(verified == VerifiedToken(format: .accessToken007, grant: TokenGrant(loginExpiresAt: 1_700_003_600)))
}

@Test(.timeLimit(.minutes(1))) func mints007MatchingReferenceBody() throws {
    let token = try TokenMinter.mint007(
        appId: ReferenceTokens.appId, appCertificate: ReferenceTokens.certificate, userId: "alice",
        issuedAt: 1_700_000_000, expireSeconds: 3600, salt: 99_999)
    let ours = try AccessToken007(parsing: token)
    let reference = try AccessToken007(parsing: ReferenceTokens.alice007)
    #expect(ours.signingInfo == reference.signingInfo)
    #expect(ours.signature == reference.signature)
}

@Test(.timeLimit(.minutes(1))) func verifiesReference007TokenWithSeveralServices() throws {
    let grant = try ReferenceTokens.verifier.verifyLogin(
        token: ReferenceTokens.bob007WithRTC, appId: ReferenceTokens.appId, userId: "bob", now: 1_700_000_000)
    #expect(grant.loginExpiresAt == 1_700_001_800)
    let parsed = try AccessToken007(parsing: ReferenceTokens.bob007WithRTC)
    #expect(parsed.services[TokenService.rtcType]?.fields == .rtc(channelName: "room", uid: "bob"))
    #expect(parsed.services[TokenService.rtcType]?.privileges == [1: 600])
}

@Suite(.timeLimit(.minutes(1))) struct ReferenceVectorScriptTests {
    @Test func the007VectorsAreWhatTheScriptMints() async throws {
        let output = try await ProcessRunner.python("reference_007_tokens.py", ["--vectors"])
        try #require(output.status == 0, "tools/reference_007_tokens.py failed: \(output.text)")
        #expect(output.text == "alice007 \(ReferenceTokens.alice007)\nbob007WithRTC \(ReferenceTokens.bob007WithRTC)\n")
    }
}
