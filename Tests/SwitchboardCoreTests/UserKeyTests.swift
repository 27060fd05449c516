import Testing
import SwitchboardCore

/// A user's key hashes its user id alone; two apps' users with one id stay two users.
@Suite(.timeLimit(.minutes(2))) struct UserKeyTests {
    @Test func equalIdsOfTwoAppsAreTwoKeysWithOneHash() {
        let first = UserKey("app-a", "alice"), second = UserKey("app-b", "alice")
        #expect(first != second)
        #expect(first.hashValue == second.hashValue)
        var sessions: [UserKey: Int] = [first: 1, second: 2]
        #expect(sessions.count == 2 && sessions[first] == 1 && sessions[second] == 2)
        sessions[first] = nil
        #expect(sessions[second] == 2 && sessions[UserKey("app-a", "alice")] == nil)
    }

    @Test func keysOfOneAppAreFoundByValue() {
        let keys = (0..<1_000).map { UserKey("app", "user-\($0)") }
        let table = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) })
        #expect(keys.enumerated().allSatisfy { table[UserKey($1.app, $1.userId)] == $0 })
        #expect(table[UserKey("other-app", "user-1")] == nil)
    }
}
