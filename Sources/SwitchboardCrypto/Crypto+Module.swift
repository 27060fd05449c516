import SwitchboardCore

/// On the bus, `Crypto` answers `VerifyLoginToken` (and the join-token check, minting and
/// `ReplaceAppCertificates`) when at least one app is configured. With no app configured it
/// registers nothing, which the session module reads as development mode.
extension Crypto: Module {
    /// `"crypto"`.
    public nonisolated var name: String { "crypto" }

    /// Registers the `VerifyLoginToken`, `VerifyChannelJoinToken`, `MintToken` and
    /// `ReplaceAppCertificates` handlers if any app credential is configured. Each check reads the
    /// certificates in force at that moment.
    public func start(_ context: ModuleContext) async {
        guard verifier.hasCredentials else { return }
        handleChannelJoinTokens(context)
        handleMinting(context)
        let certificates = self.certificates
        let clock = context.clock
        context.bus.handle(ReplaceAppCertificates.self) { request in
            certificates.replace(with: request.certificates)
            return Done()
        }
        context.bus.handle(VerifyLoginToken.self) { request throws(RtmError) in
            try certificates.verifier.verifyLogin(
                token: request.token, appId: request.appId, userId: request.userId,
                now: clock.wallMilliseconds / 1000)
        }
    }
}
