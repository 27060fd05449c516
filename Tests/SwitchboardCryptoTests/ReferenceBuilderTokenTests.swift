import SwitchboardCore
import SwitchboardTestKit
import Testing

@testable import SwitchboardCrypto

/// 006 tokens minted by the reference's own builder (PyPI `agora-token-builder`, through
/// `tools/reference_tokens.py` and the interpreter `tools/test.sh` sets up), checked by ours.
@Suite(.timeLimit(.minutes(2))) struct ReferenceBuilderTokenTests {
    static let appId = "970CA35de60c44645bbae8a215061b33"
    static let certificate = "5CFd2fd1755d40ecb72977518be15d3b"
    static let otherAppId = "0123456789abcdef0123456789abcdef"
    static let otherCertificate = "c0ffeec0ffeec0ffeec0ffeec0ffee00"
    static let verifier = TokenVerifier(credentials: [appId: certificate, otherAppId: otherCertificate])
    static let expiresAt: UInt64 = 1_800_000_600

    /// `RtmTokenBuilder.buildToken(app, certificate, account, Role_Rtm_User, expiresAt)`, or the
    /// same with a fixed salt and timestamp when `fixed` is given.
    func referenceToken(
        for account: String, app: String = appId, certificate: String = certificate,
        fixed: (salt: UInt32, ts: UInt32)? = nil
    ) async throws -> String {
        var arguments = [app, certificate, account, String(Self.expiresAt)]
        if let fixed { arguments += [String(fixed.salt), String(fixed.ts)] }
        let output = try await ProcessRunner.python("reference_tokens.py", arguments)
        try #require(output.status == 0, "tools/reference_tokens.py failed: \(output.text)")
        return output.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func refusal(_ token: String, user: String = "alice", now: UInt64) -> RtmError? {
        do {
            _ = try Self.verifier.verify(token: token, appId: Self.appId, userId: user, now: now)
            return nil
        } catch {
            return error
        }
    }

    @Test func aReferenceTokenLogsItsAccountIn() async throws {
        let token = try await referenceToken(for: "alice")
        let verified = try Self.verifier.verify(token: token, appId: Self.appId, userId: "alice", now: Self.expiresAt - 600)
        #expect(verified == VerifiedToken(format: .accessToken006, grant: TokenGrant(loginExpiresAt: Self.expiresAt)))
    }

    @Test func aReferenceTokenForAnotherAccountIsInvalidToken() async throws {
        let token = try await referenceToken(for: "alice")
        let error = refusal(token, user: "bob", now: Self.expiresAt - 600)
        #expect(error?.code == .invalidToken)
        #expect(error?.reason == "token was issued for another user")
        #expect(refusal(token, user: "alic", now: Self.expiresAt - 600)?.code == .invalidToken)
    }

    @Test func anExpiredReferenceTokenIsTokenExpired() async throws {
        let token = try await referenceToken(for: "alice")
        let error = refusal(token, now: Self.expiresAt)
        #expect(error?.code == .tokenExpired)
        #expect(error?.code.rawValue == -10009)
        #expect(error?.operation == "login")
    }

    /// -10016 loginInconsistentAppId, as the reference's error table has it for an App ID that
    /// does not match the token (see `TokenVerifier.verify`).
    @Test func aReferenceTokenForAnotherAppIsInconsistentAppId() async throws {
        let token = try await referenceToken(for: "alice", app: Self.otherAppId, certificate: Self.otherCertificate)
        let error = refusal(token, now: Self.expiresAt - 600)
        #expect(error?.code == .loginInconsistentAppId)
        #expect(error?.code.rawValue == -10016)
    }

    @Test func ourMinterWritesTheReferenceBuildersLayout() async throws {
        let reference = try await referenceToken(for: "alice", fixed: (salt: 42, ts: 1_800_086_400))
        let ours = try TokenMinter.mint006(
            appId: Self.appId, appCertificate: Self.certificate, userId: "alice", salt: 42, ts: 1_800_086_400,
            loginExpiresAt: UInt32(Self.expiresAt))
        #expect(ours == reference)
    }
}
