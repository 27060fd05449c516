import SwitchboardCore

extension Crypto {
    /// Answers `VerifyChannelJoinToken` on `context.bus` with this module's app certificates, so
    /// a stream channel is joined only with an RTC token for it.
    nonisolated func handleChannelJoinTokens(_ context: ModuleContext) {
        let certificates = self.certificates
        let clock = context.clock
        context.bus.handle(VerifyChannelJoinToken.self) { request throws(RtmError) in
            try certificates.verifier.verifyChannelJoin(
                token: request.token, appId: request.app, userId: request.userId, channelName: request.channelName,
                now: clock.wallMilliseconds / 1000)
        }
    }
}
