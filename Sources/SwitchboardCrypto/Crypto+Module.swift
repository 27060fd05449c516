import SwitchboardCore

/// On the bus, `Crypto` answers `VerifyLoginToken` (and the join-token check and minting) when at least one app is configured. With no
/// app configured it registers nothing, which the session module reads as development mode.
extension Crypto: Module {
    /// `"crypto"`.
    public nonisolated var name: String { "crypto" }

    /// Registers the `VerifyLoginToken`, `VerifyChannelJoinToken` and `MintToken` handlers if any
    /// app credential is configured.
    public func start(_ context: ModuleContext) async {
        guard verifier.hasCredentials else { return }
        handleChannelJoinTokens(context)
        handleMinting(context)
        let verifier = self.verifier
        let clock = context.clock
        context.bus.handle(VerifyLoginToken.self) { request throws(RtmError) in
            try verifier.verifyLogin(
                token: request.token, appId: request.appId, userId: request.userId,
                now: clock.wallMilliseconds / 1000)
        }
    }
}
