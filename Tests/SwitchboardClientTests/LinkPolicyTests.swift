import Testing
@testable import SwitchboardClient

@Suite struct LinkPolicyTests {
    @Test func backoffDoublesToACap() {
        #expect(LinkPolicy.backoff(attempt: 0) == .milliseconds(100))
        #expect(LinkPolicy.backoff(attempt: 1) == .milliseconds(200))
        #expect(LinkPolicy.backoff(attempt: 5) == .milliseconds(3_200))
        #expect(LinkPolicy.backoff(attempt: 6) == .seconds(5))
        #expect(LinkPolicy.backoff(attempt: 1_000) == .seconds(5))
    }

    @Test func onlyUnreachableServersAreRetried() {
        #expect(LinkPolicy.fatalReason(forLoginError: .notConnected) == nil)
        #expect(LinkPolicy.fatalReason(forLoginError: .loginTimeout) == nil)
        #expect(LinkPolicy.fatalReason(forLoginError: .invalidToken) == .invalidToken)
        #expect(LinkPolicy.fatalReason(forLoginError: .tokenExpired) == .tokenExpired)
        #expect(LinkPolicy.fatalReason(forLoginError: .invalidAppId) == .inconsistentAppId)
        #expect(LinkPolicy.fatalReason(forLoginError: .loginNoServerResources) == .loginRejected)
    }

    @Test func closingReasonsDecideBetweenResumeAndFailure() {
        #expect(LinkPolicy.decision(forClosing: .keepAliveTimeout) == .reconnect)
        #expect(LinkPolicy.decision(forClosing: .relogin) == .ignore)
        #expect(LinkPolicy.decision(forClosing: .sameUidLogin) == .fail(.sameUidLogin))
        #expect(LinkPolicy.decision(forClosing: .tokenExpired) == .fail(.tokenExpired))
        #expect(LinkPolicy.decision(forClosing: .unknown) == .fail(.kickedOutByServer))
    }
}
