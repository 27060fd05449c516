import SwitchboardCore
import SwitchboardTestKit
import Testing

@testable import SwitchboardCrypto

private let appId = "0123456789abcdef0123456789abcdef"
private let certificate = "c0ffeec0ffeec0ffeec0ffeec0ffee00"
/// `ManualClock`'s wall clock starts at 1_700_000_000_000 ms.
private let clockStart: UInt32 = 1_700_000_000

private func harness() async -> ModuleHarness {
    await ModuleHarness(modules: [Crypto(credentials: [appId: certificate])])
}

private func token(for user: String = "alice", expireSeconds: UInt32 = 600) throws -> String {
    try TokenMinter.mint007(
        appId: appId, appCertificate: certificate, userId: user, issuedAt: clockStart, expireSeconds: expireSeconds,
        salt: 11)
}

private func rejection(_ request: VerifyLoginToken, on bus: EventBus) async -> RtmError? {
    do {
        _ = try await bus.request(request)
        return nil
    } catch {
        return error
    }
}

@Test(.timeLimit(.minutes(1))) func cryptoModuleIsNamedCrypto() {
    #expect(Crypto().name == "crypto")
}

@Test(.timeLimit(.minutes(1))) func cryptoModuleAcceptsAValidToken() async throws {
    let world = await harness()
    #expect(world.bus.hasHandler(VerifyLoginToken.self))
    let grant = try await world.bus.request(VerifyLoginToken(appId: appId, userId: "alice", token: try token()))
    #expect(grant == TokenGrant(loginExpiresAt: UInt64(clockStart) + 600))
}

@Test(.timeLimit(.minutes(1))) func cryptoModuleRejectsATokenForAnotherUser() async throws {
    let world = await harness()
    let error = await rejection(VerifyLoginToken(appId: appId, userId: "alice", token: try token(for: "bob")), on: world.bus)
    #expect(error?.code == .invalidToken)
    #expect(error?.code.rawValue == -10005)
    #expect(error?.operation == "login")
}

@Test(.timeLimit(.minutes(1))) func cryptoModuleRejectsATokenOnceTheClockPassesItsExpiry() async throws {
    let world = await harness()
    let request = VerifyLoginToken(appId: appId, userId: "alice", token: try token(expireSeconds: 600))
    world.clock.advance(by: .seconds(599))
    #expect(await rejection(request, on: world.bus) == nil)
    world.clock.advance(by: .seconds(1))
    let error = await rejection(request, on: world.bus)
    #expect(error?.code == .tokenExpired)
    #expect(error?.code.rawValue == -10009)
    #expect(error?.operation == "login")
}

@Test(.timeLimit(.minutes(1))) func cryptoModuleRejectsAnUnknownAppId() async throws {
    let world = await harness()
    let other = "fedcba9876543210fedcba9876543210"
    let error = await rejection(VerifyLoginToken(appId: other, userId: "alice", token: try token()), on: world.bus)
    #expect(error?.code == .invalidAppId)
    #expect(error?.code.rawValue == -10003)
    #expect(error?.operation == "login")
}

@Test(.timeLimit(.minutes(1))) func cryptoModuleWithoutCredentialsLeavesTokenChecksOff() async {
    let world = await ModuleHarness(modules: [Crypto()])
    #expect(!world.bus.hasHandler(VerifyLoginToken.self))
}
