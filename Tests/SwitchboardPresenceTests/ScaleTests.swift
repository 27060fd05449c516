import Testing
import SwitchboardCore
import SwitchboardPresence

/// A join or leave costs O(1) whatever the channel's size, and paging copies only the page.
@Suite(.timeLimit(.minutes(2))) struct ScaleTests {
    func caller(_ index: Int) -> Caller { Caller(app: "app", userId: "user\(index)", session: SessionID(UInt64(index + 1))) }

    /// Seconds `rounds` joins and leaves of newcomers take in `channel` (the best of three tries).
    func churn(_ store: InMemoryPresenceStore, _ channel: ChannelKey, from first: Int, rounds: Int) async throws -> Double {
        var best = Double.infinity
        for attempt in 0..<3 {
            let start = ContinuousClock.now
            for index in 0..<rounds {
                let newcomer = caller(first + attempt * rounds + index)
                _ = try await store.join(newcomer, channel, features: [.message, .presence])
                _ = try await store.leave(newcomer, channel)
            }
            let elapsed = ContinuousClock.now - start
            best = min(best, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        return best
    }

    @Test func aJoinAndLeaveInAChannelOfTenThousandCostAboutWhatTheyCostInOneOfAHundred() async throws {
        let store = InMemoryPresenceStore()
        let small = ChannelKey(app: "app", .message, "small")
        let large = ChannelKey(app: "app", .message, "large")
        for index in 0..<100 { _ = try await store.join(caller(index), small, features: [.message, .presence]) }
        for index in 100..<10_100 { _ = try await store.join(caller(index), large, features: [.message, .presence]) }
        #expect(try await store.occupancy(of: large) == 10_000)
        let inSmall = try await churn(store, small, from: 100_000, rounds: 2_000)
        let inLarge = try await churn(store, large, from: 200_000, rounds: 2_000)
        // A copy of the large channel's tables per call would make this ratio about 100.
        #expect(inLarge < inSmall * 5 + 0.05, "small: \(inSmall) s, large: \(inLarge) s")
        #expect(try await store.occupancy(of: large) == 10_000)
    }

    @Test func pagingTenThousandMembersReturnsEachOnce() async throws {
        let store = InMemoryPresenceStore()
        let channel = ChannelKey(app: "app", .stream, "hall")
        for index in 0..<10_000 { _ = try await store.join(caller(index), channel, features: [.presence]) }
        var seen: [UserID] = []
        var cursor: UInt64 = 0
        var pages = 0
        repeat {
            let page = try await store.members(of: channel, after: cursor, limit: 100, budget: PresenceSize.partBudget, withStates: true)
            seen += page.users.map(\.userId)
            pages += 1
            guard let next = page.next else { break }
            cursor = next
        } while pages < 1_000
        #expect(pages == 100)
        #expect(seen == (0..<10_000).map { "user\($0)" })
    }
}
