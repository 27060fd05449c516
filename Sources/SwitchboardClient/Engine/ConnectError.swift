import SwitchboardCore
import SwitchboardCryptography
import SwitchboardTransport

extension RtmErrorInfo {
    /// The login error for a connection attempt that failed. A server whose TLS certificate is
    /// untrusted or for another host name gives `.loginAborted`, which ends the login (another
    /// attempt would meet the same certificate); anything else gives `.notConnected`, retried.
    static func connectFailure(_ error: any Error, url: String) -> RtmErrorInfo {
        if case WebSocketClientError.tlsFailed(let failure) = error, failure.kind == .certificate {
            return RtmErrorInfo(
                .loginAborted, operation: "login",
                reason: "the TLS certificate of \(url) was refused: \(failure.reason)")
        }
        return RtmErrorInfo(.notConnected, operation: "login", reason: "cannot connect to \(url): \(error)")
    }
}
