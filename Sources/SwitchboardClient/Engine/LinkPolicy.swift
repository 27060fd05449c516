import SwitchboardCore

/// The client's pure decisions about its link: how long to wait between attempts, and what a
/// server's closing reason or a login error means.
enum LinkPolicy {
    /// What to do when the server says it is closing the connection.
    enum ClosingDecision: Equatable {
        /// Reconnect and resume the session.
        case reconnect
        /// Stop: the link is failed for `reason`.
        case fail(RtmLinkStateChangeReason)
        /// The connection was replaced by this client's own resume: nothing to do.
        case ignore
    }

    /// The pause before reconnect attempt `attempt` (0-based): 100 ms doubling to at most 5 s.
    static func backoff(attempt: Int) -> Duration {
        let milliseconds = 100 << min(attempt, 6)
        return .milliseconds(min(milliseconds, 5_000))
    }

    /// Reads the server's closing reason.
    static func decision(forClosing reason: RtmLinkStateChangeReason) -> ClosingDecision {
        switch reason {
        case .keepAliveTimeout, .connectionError, .networkChange: .reconnect
        case .relogin: .ignore
        case .sameUidLogin, .tokenExpired, .invalidToken, .inconsistentAppId, .loginRejected: .fail(reason)
        default: .fail(.kickedOutByServer)
        }
    }

    /// The link-state reason for a login the server refused, when retrying cannot help; nil
    /// when the server could not be reached or did not answer, which the next attempt may fix.
    static func fatalReason(forLoginError code: RtmErrorCode) -> RtmLinkStateChangeReason? {
        switch code {
        case .notConnected, .loginTimeout: nil
        case .invalidToken: .invalidToken
        case .tokenExpired: .tokenExpired
        case .invalidAppId, .loginInconsistentAppId: .inconsistentAppId
        case .invalidUserId: .invalidUserId
        case .loginNotAuthorized: .loginNotAuthorized
        default: .loginRejected
        }
    }
}
