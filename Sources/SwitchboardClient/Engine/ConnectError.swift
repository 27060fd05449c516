import SwitchboardCore

extension RtmErrorInfo {
    /// The login error for a connection attempt that failed. A server whose TLS certificate is
    /// untrusted or for another host name gives `.loginAborted`, which ends the login (another
    /// attempt would meet the same certificate); anything else gives `.notConnected`, retried.
    static func connectFailure(_ failure: TransportFailure, url: String) -> RtmErrorInfo {
        switch failure.kind {
        case .certificateRefused:
            RtmErrorInfo(
                .loginAborted, operation: OperationName.Session.login, reason: "the TLS certificate of \(url) was refused: \(failure.reason)")
        case .failed:
            RtmErrorInfo(.notConnected, operation: OperationName.Session.login, reason: "cannot connect to \(url): \(failure.reason)")
        }
    }
}
