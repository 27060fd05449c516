import SwitchboardCore
/// Logging in and out, and the login token.
extension RtmClientKit {
    /// Logs in with `token` (empty or nil when the server has no app certificate). A login still
    /// under way is replaced: it answers `loginCanceled`.
    public func login(_ token: String?) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await loginCall(token).result()
    }

    /// Logs in with `token`, calling `completionBlock` when done.
    public func login(_ token: String?, completion completionBlock: RtmOperationBlock? = nil) {
        loginCall(token).complete(completionBlock)
    }

    /// Logs out: the session ends at once, with no presence grace. A login still under way is
    /// canceled (it answers `loginCanceled`).
    public func logout() async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await logoutCall().result()
    }

    /// Logs out, calling `completionBlock` when done.
    public func logout(_ completionBlock: RtmOperationBlock? = nil) {
        logoutCall().complete(completionBlock)
    }

    /// Replaces the login token. The new token is used for later reconnects only once the server
    /// has accepted it.
    public func renewToken(_ token: String) async -> (RtmCommonResponse?, RtmErrorInfo?) {
        await renewCall(token).result()
    }

    /// Replaces the login token, calling `completionBlock` when done.
    public func renewToken(_ token: String, completion completionBlock: RtmOperationBlock? = nil) {
        renewCall(token).complete(completionBlock)
    }

    private func loginCall(_ token: String?) -> RtmCall<RtmCommonResponse> {
        RtmCall(kit: self) { engine, resolve in
            await engine.login(token: token) { error in
                resolve(error.map { .failure($0) } ?? .success(RtmCommonResponse()))
            }
        }
    }

    private func logoutCall() -> RtmCall<RtmCommonResponse> {
        RtmCall(kit: self) { engine, resolve in
            await engine.logout { outcome in resolve(outcome.map { _ in RtmCommonResponse() }) }
        }
    }

    private func renewCall(_ token: String) -> RtmCall<RtmCommonResponse> {
        RtmCall(kit: self) { engine, resolve in
            await engine.renewToken(token) { outcome in resolve(outcome.map { _ in RtmCommonResponse() }) }
        }
    }
}
