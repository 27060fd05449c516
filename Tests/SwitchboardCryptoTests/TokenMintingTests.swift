import SwitchboardCore
import SwitchboardTestKit
import Testing

@testable import SwitchboardCrypto

/// `MintToken` on the bus: login and stream-channel tokens in both formats, each accepted by the
/// verifier the server logs clients in with, and refused for an app without a certificate.
@Suite(.timeLimit(.minutes(1))) struct TokenMintingTests {
    let appId = "0123456789abcdef0123456789abcdef"
    let certificate = "c0ffeec0ffeec0ffeec0ffeec0ffee00"
    /// `ManualClock`'s wall clock starts at 1_700_000_000_000 ms.
    let now: UInt64 = 1_700_000_000

    @Test(arguments: TokenFormat.allCases) func loginTokensAdmitTheirUserUntilTheyExpire(format: TokenFormat) async throws {
        let world = await ModuleHarness(modules: [Crypto(credentials: [appId: certificate])])
        let minted = try await world.bus.request(MintToken(appId: appId, userId: "alice", format: format, expireSeconds: 600))
        #expect(minted.token.hasPrefix(format.rawValue))
        #expect(minted.expiresAt == now + 600)
        let verifier = TokenVerifier(credentials: [appId: certificate])
        #expect(try verifier.verifyLogin(token: minted.token, appId: appId, userId: "alice", now: now).loginExpiresAt == now + 600)
        #expect(throws: RtmError.self) { try verifier.verifyLogin(token: minted.token, appId: appId, userId: "bob", now: now) }
        #expect(throws: RtmError.self) { try verifier.verifyLogin(token: minted.token, appId: appId, userId: "alice", now: now + 601) }
        await world.stop()
    }

    @Test(arguments: TokenFormat.allCases) func streamChannelTokensAdmitTheirUserToTheirChannel(format: TokenFormat) async throws {
        let world = await ModuleHarness(modules: [Crypto(credentials: [appId: certificate])])
        let minted = try await world.bus.request(
            MintToken(appId: appId, userId: "alice", format: format, streamChannel: "live", expireSeconds: 0))
        #expect(minted.expiresAt == nil)
        let verifier = TokenVerifier(credentials: [appId: certificate])
        let grant = try verifier.verifyChannelJoin(token: minted.token, appId: appId, userId: "alice", channelName: "live", now: now)
        #expect(grant.expiresAt == nil)
        #expect(throws: RtmError.self) {
            try verifier.verifyChannelJoin(token: minted.token, appId: appId, userId: "alice", channelName: "other", now: now)
        }
        await world.stop()
    }

    @Test func anAppWithoutACertificateIsRefusedAndNoCertificatesMeansNoMinting() async throws {
        let world = await ModuleHarness(modules: [Crypto(credentials: [appId: certificate])])
        await #expect(throws: RtmError(.invalidAppId, operation: "mintToken", reason: "no certificate for app id 'other'")) {
            _ = try await world.bus.request(MintToken(appId: "other", userId: "alice"))
        }
        await world.stop()
        let bare = await ModuleHarness(modules: [Crypto()])
        #expect(!bare.bus.hasHandler(MintToken.self))
        await bare.stop()
    }

    @Test func a006TokenNeedsA32CharacterAppId() async throws {
        let world = await ModuleHarness(modules: [Crypto(credentials: ["short": certificate])])
        await #expect(throws: RtmError.self) { _ = try await world.bus.request(MintToken(appId: "short", userId: "alice", format: .v006)) }
        #expect(try await world.bus.request(MintToken(appId: "short", userId: "alice", format: .v007)).token.hasPrefix("007"))
        await world.stop()
    }
}
