import Synchronization
import SwitchboardCore

/// The app certificates in force: read at each token check, replaced whole by a reload, so a
/// check uses the certificates of one moment and every check after the reload the new ones.
final class Certificates: Sendable {
    private let current: Mutex<TokenVerifier>

    init(_ verifier: TokenVerifier) {
        current = Mutex(verifier)
    }

    /// The verifier of the certificates in force now.
    var verifier: TokenVerifier { current.withLock { $0 } }

    /// Puts `credentials` (`appId` → app certificate) in force.
    func replace(with credentials: [String: String]) {
        let verifier = TokenVerifier(credentials: credentials)
        current.withLock { $0 = verifier }
    }
}
