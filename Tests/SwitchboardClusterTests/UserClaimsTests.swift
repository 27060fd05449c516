import Testing
import SwitchboardCore
@testable import SwitchboardCluster

/// The newest login of a user across nodes, as one node weighs it: the later claim (the larger
/// generation) wins wherever it is heard, whichever of a claim's answer and another node's
/// announcement arrives first.
@Suite(.timeLimit(.minutes(1))) struct UserClaimsTests {
    let alice = UserKey("app", "alice")
    func session(_ number: UInt64) -> Caller { Caller(app: "app", userId: "alice", session: SessionID(number)) }

    @Test func aLaterClaimElsewhereReplacesTheSessionHereAndAnEarlierOneDoesNot() {
        var claims = UserClaims()
        claims.begin(alice)
        #expect(claims.finish(session(1), generation: 5) == nil)
        #expect(claims.heard(alice, generation: 4) == nil)
        #expect(claims.heard(alice, generation: 6) == session(1))
        // Replaced once: a second announcement finds nothing left to end.
        #expect(claims.heard(alice, generation: 7) == nil)
    }

    @Test func aClaimHeardWhileOursIsOnItsWayIsWeighedOnceOursHasItsNumber() {
        var claims = UserClaims()
        // Ours is later: the other node's session goes there, ours stays.
        claims.begin(alice)
        #expect(claims.heard(alice, generation: 3) == nil)
        #expect(claims.finish(session(1), generation: 4) == nil)
        // Theirs is later: ours ends as soon as its number is known.
        claims.begin(alice)
        #expect(claims.heard(alice, generation: 9) == nil)
        #expect(claims.finish(session(2), generation: 8) == session(2))
        #expect(claims.heard(alice, generation: 10) == nil)
    }

    @Test func aFailedClaimHoldsNothingAndAnEndedSessionIsForgotten() {
        var claims = UserClaims()
        claims.begin(alice)
        #expect(claims.finish(session(1), generation: nil) == nil)
        #expect(claims.heard(alice, generation: 1) == nil)
        claims.begin(alice)
        #expect(claims.finish(session(2), generation: 2) == nil)
        claims.ended(SessionID(3), of: alice)
        #expect(claims.heard(alice, generation: 3) == session(2), "another session's end leaves the claim")
        claims.begin(alice)
        #expect(claims.finish(session(4), generation: 4) == nil)
        claims.ended(SessionID(4), of: alice)
        #expect(claims.heard(alice, generation: 5) == nil)
    }

    @Test func usersAndAppsAreWeighedApart() {
        var claims = UserClaims()
        let bob = Caller(app: "app", userId: "bob", session: SessionID(2))
        let otherApps = Caller(app: "other", userId: "alice", session: SessionID(3))
        for caller in [session(1), bob, otherApps] {
            claims.begin(caller.user)
            #expect(claims.finish(caller, generation: 1) == nil)
        }
        #expect(claims.heard(UserKey("other", "alice"), generation: 2) == otherApps)
        #expect(claims.heard(bob.user, generation: 1) == nil)
        #expect(claims.heard(alice, generation: 2) == session(1))
    }
}
