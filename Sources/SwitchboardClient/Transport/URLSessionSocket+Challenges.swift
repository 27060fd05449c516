#if canImport(Security)
import Foundation
import Security

/// The challenges Apple's URLSession asks: the server's certificate (checked against the system's
/// roots plus `tlsCAFile`'s) and the proxy's credentials (from `RtmProxyConfig`). FoundationNetworking
/// on Linux asks neither.
extension URLSessionSocket {
    func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let (disposition, credential) = answer(challenge)
        completionHandler(disposition, credential)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let (disposition, credential) = answer(challenge)
        completionHandler(disposition, credential)
    }

    private func answer(_ challenge: URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        let space = challenge.protectionSpace
        if space.authenticationMethod == NSURLAuthenticationMethodServerTrust, let trust = space.serverTrust {
            guard !options.anchors.isEmpty else { return (.performDefaultHandling, nil) }
            let anchors = options.anchors.compactMap { SecCertificateCreateWithData(nil, $0 as CFData) }
            SecTrustSetAnchorCertificates(trust, anchors as CFArray)
            // The system's roots stay trusted beside the added ones.
            SecTrustSetAnchorCertificatesOnly(trust, false)
            var error: CFError?
            guard SecTrustEvaluateWithError(trust, &error) else {
                refuseCertificate(error.map { CFErrorCopyDescription($0) as String } ?? "the certificate is not trusted")
                return (.cancelAuthenticationChallenge, nil)
            }
            return (.useCredential, URLCredential(trust: trust))
        }
        if space.isProxy(), let proxy = options.proxy, let username = proxy.username, challenge.previousFailureCount == 0 {
            return (.useCredential, URLCredential(user: username, password: proxy.password, persistence: .forSession))
        }
        return (.performDefaultHandling, nil)
    }
}
#endif
