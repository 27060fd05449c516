import Synchronization
import SwitchboardCore

/// An in-memory stand-in for token checking: answers `VerifyLoginToken` from a table of valid
/// tokens per user, so session tests need no real certificates.
public final class FakeTokenChecks: Module {
    public let name = "fake-token-checks"
    private let tokens = Mutex<[UserID: (token: String, expiresAt: UInt64?)]>([:])

    /// Creates a checker that accepts no token until `allow` is called.
    public init() {}

    /// Accepts `token` for `userId`, valid until `expiresAt` (Unix seconds) if given.
    public func allow(_ token: String, for userId: UserID, expiresAt: UInt64? = nil) {
        tokens.withLock { $0[userId] = (token, expiresAt) }
    }

    public func start(_ context: ModuleContext) async {
        context.bus.handle(VerifyLoginToken.self) { [self] request throws(RtmError) in
            guard let entry = tokens.withLock({ $0[request.userId] }), entry.token == request.token else {
                throw RtmError(.invalidToken, operation: VerifyLoginToken.operation, reason: "unknown token")
            }
            if let expiresAt = entry.expiresAt, context.clock.wallMilliseconds / 1000 >= expiresAt {
                throw RtmError(.tokenExpired, operation: VerifyLoginToken.operation, reason: "the token expired")
            }
            return TokenGrant(loginExpiresAt: entry.expiresAt)
        }
    }
}
