import Foundation
import SwitchboardCore
import SwitchboardTestKit
import Testing

@testable import SwitchboardCrypto

/// RTC tokens for joining a stream channel: vectors from PyPI's `agora-token-builder`
/// (`AccessToken` with a fixed salt 7654321 and ts 1700086400), the independent 007 vector of
/// `ReferenceTokens`, and tokens minted here for the refusals.
@Suite(.timeLimit(.minutes(2))) struct ChannelJoinTokenTests {
    /// 006 for account "alice", channel "live": join (1) and publish audio (2) until 1700003600.
    static let alice006 =
        "006970CA35de60c44645bbae8a215061b33IADL/xDQELja4ETaFZxe9lkRXzdTXLCF+e+6fBzv8kG2Ia8sD1NHvI4nFgCxy3QAgEJVZQIAAQAQ/1NlAgAQ/1Nl"
    /// 006 for uid 0 (any user), channel "live": join, never expiring.
    static let anyone006 =
        "006970CA35de60c44645bbae8a215061b33IABkCT4drKcd6Omy3BszF+sKDaNe8w2LAyC7JLO4E13Sz68sD1MAAAAAEACxy3QAgEJVZQEAAQAAAAAA"
    /// 006 for "alice", channel "live", with publish audio but no join privilege.
    static let aliceNoJoin006 =
        "006970CA35de60c44645bbae8a215061b33IAAFwYG8f2t1mn8P0uRs0ZkK2kO/3Vc3ZRiDL2uFtGTLra8sD1NHvI4nEACxy3QAgEJVZQEAAgAQ/1Nl"

    let verifier = ReferenceTokens.verifier
    let app = ReferenceTokens.appId

    func verify(_ token: String, user: String = "alice", channel: String = "live", now: UInt64 = 1_700_000_000) throws(RtmError)
        -> ChannelJoinGrant
    {
        try verifier.verifyChannelJoin(token: token, appId: app, userId: user, channelName: channel, now: now)
    }

    func expectRefusal(_ code: RtmErrorCode, _ body: () throws(RtmError) -> ChannelJoinGrant) {
        do {
            _ = try body()
            Issue.record("expected \(code)")
        } catch {
            #expect(error.code == code, "\(error)")
            #expect(error.operation == "join")
        }
    }

    @Test func rtcTokensOfTheTokenBuilderAdmitTheirUserToTheirChannel() throws {
        #expect(try verify(Self.alice006) == ChannelJoinGrant(expiresAt: 1_700_003_600))
        #expect(try verify(Self.anyone006, user: "bob") == ChannelJoinGrant(expiresAt: nil))
        expectRefusal(.invalidToken) { () throws(RtmError) in try verify(Self.alice006, user: "bob") }
        expectRefusal(.invalidToken) { () throws(RtmError) in try verify(Self.alice006, channel: "other") }
        expectRefusal(.invalidToken) { () throws(RtmError) in try verify(Self.aliceNoJoin006) }
        expectRefusal(.tokenExpired) { () throws(RtmError) in try verify(Self.alice006, now: 1_700_003_600) }
        // A login token (RTM privilege 1000, no channel) is no RTC token.
        expectRefusal(.invalidToken) { () throws(RtmError) in try verify(ReferenceTokens.alice006) }
    }

    @Test func rtc007TokensNeedTheRtcServiceForTheChannelAndUser() throws {
        // The independent vector: RTC service for channel "room", uid "bob", join until +600.
        #expect(try verify(ReferenceTokens.bob007WithRTC, user: "bob", channel: "room") == ChannelJoinGrant(expiresAt: 1_700_000_600))
        expectRefusal(.invalidToken) { () throws(RtmError) in try verify(ReferenceTokens.bob007WithRTC, user: "alice", channel: "room") }
        expectRefusal(.invalidToken) { () throws(RtmError) in try verify(ReferenceTokens.bob007WithRTC, user: "bob", channel: "live") }
        expectRefusal(.tokenExpired) { () throws(RtmError) in
            try verify(ReferenceTokens.bob007WithRTC, user: "bob", channel: "room", now: 1_700_000_600)
        }
        expectRefusal(.invalidToken) { () throws(RtmError) in try verify(ReferenceTokens.alice007) }

        let anyone = try AccessToken007.build(
            appId: app, appCertificate: ReferenceTokens.certificate, issueTs: 1_700_000_000, expire: 0, salt: 5,
            services: [TokenService(privileges: [1: 0], fields: .rtc(channelName: "live", uid: ""))])
        #expect(try verify(anyone, user: "carol") == ChannelJoinGrant(expiresAt: nil))
        let noJoin = try AccessToken007.build(
            appId: app, appCertificate: ReferenceTokens.certificate, issueTs: 1_700_000_000, expire: 0, salt: 5,
            services: [TokenService(privileges: [2: 0], fields: .rtc(channelName: "live", uid: "alice"))])
        expectRefusal(.invalidToken) { () throws(RtmError) in try verify(noJoin) }
        let forged = try AccessToken007.build(
            appId: app, appCertificate: "another certificate", issueTs: 1_700_000_000, expire: 0, salt: 5,
            services: [TokenService(privileges: [1: 0], fields: .rtc(channelName: "live", uid: "alice"))])
        expectRefusal(.invalidToken) { () throws(RtmError) in try verify(forged) }
    }

    @Test func unknownAppsAndFormatsAreRefused() {
        expectRefusal(.invalidAppId) { () throws(RtmError) in
            try verifier.verifyChannelJoin(token: Self.alice006, appId: "other", userId: "alice", channelName: "live", now: 0)
        }
        let otherApp = TokenVerifier(credentials: ["0123456789abcdef0123456789abcdef": ReferenceTokens.certificate])
        expectRefusal(.loginInconsistentAppId) { () throws(RtmError) in
            try otherApp.verifyChannelJoin(
                token: Self.alice006, appId: "0123456789abcdef0123456789abcdef", userId: "alice", channelName: "live", now: 0)
        }
        expectRefusal(.invalidToken) { () throws(RtmError) in try verify("") }
        expectRefusal(.invalidToken) { () throws(RtmError) in try verify(app) }
        expectRefusal(.invalidToken) { () throws(RtmError) in try verify("006garbage") }
    }

    @Test func theModuleAnswersTheBusOnlyWithCertificates() async throws {
        let configured = await ModuleHarness(modules: [Crypto(credentials: [app: ReferenceTokens.certificate])])
        #expect(configured.bus.hasHandler(VerifyChannelJoinToken.self))
        await #expect(throws: RtmError.self) {
            _ = try await configured.bus.request(
                VerifyChannelJoinToken(app: app, userId: "alice", channelName: "live", token: Self.aliceNoJoin006))
        }
        await configured.stop()
        let development = await ModuleHarness(modules: [Crypto()])
        #expect(!development.bus.hasHandler(VerifyChannelJoinToken.self))
        await development.stop()
    }

    @Test func freshTokensFromTheReferenceBuilderAreAccepted() async throws {
        let now = UInt64(Date().timeIntervalSince1970)
        for (account, user) in [("alice", "alice"), ("0", "anyone")] {
            let output = try await ProcessRunner.python(
                "reference_rtc_tokens.py", [app, ReferenceTokens.certificate, "live", account, "\(now + 600)"])
            #expect(output.status == 0, "\(output.text)")
            let token = output.text.trimmingCharacters(in: .whitespacesAndNewlines)
            let grant = try verifier.verifyChannelJoin(token: token, appId: app, userId: user, channelName: "live", now: now)
            #expect(grant == ChannelJoinGrant(expiresAt: now + 600))
            expectRefusal(.invalidToken) { () throws(RtmError) in
                try verifier.verifyChannelJoin(token: token, appId: app, userId: user, channelName: "lives", now: now)
            }
        }
    }
}
