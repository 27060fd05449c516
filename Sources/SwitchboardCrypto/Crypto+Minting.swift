import SwitchboardCore

extension Crypto {
    /// Answers `MintToken` on `context.bus` for the apps whose certificates this module holds
    /// (`invalidAppId` for another app), as an application server would issue them.
    nonisolated func handleMinting(_ context: ModuleContext) {
        let certificates = self.certificates
        let clock = context.clock
        context.bus.handle(MintToken.self) { request throws(RtmError) in
            guard let certificate = certificates.verifier.credentials[request.appId] else {
                throw RtmError(.invalidAppId, operation: MintToken.operation, reason: "no certificate for app id '\(request.appId)'")
            }
            let now = UInt32(clamping: clock.wallMilliseconds / 1000)
            return try TokenMinter.mint(request, appCertificate: certificate, now: now, salt: UInt32.random(in: 1...UInt32.max))
        }
    }
}
