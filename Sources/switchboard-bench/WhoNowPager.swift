import Synchronization
import SwitchboardBench
import SwitchboardCore

/// Pages through a channel's members with `whoNow`, one request at a time, over and over. Each
/// pass must list every one of the channel's users exactly once, with the state it set when
/// states are asked for.
final class WhoNowPager: Sendable {
    private struct State {
        var page = ""
        var seen: UserBitmap
        var passes = 0
        var badPasses = 0
    }

    private let channel: ChannelAddress
    private let users: Int
    private let includeState: Bool
    private let state: Mutex<State>

    init(channel: ChannelAddress, users: Int, includeState: Bool) {
        self.channel = channel
        self.users = users
        self.includeState = includeState
        state = Mutex(State(seen: UserBitmap(capacity: users)))
    }

    /// Passes over the whole channel completed, and those that did not list every user once.
    var passes: (completed: Int, bad: Int) { state.withLock { ($0.passes, $0.badPasses) } }

    /// A publisher that sends this pager's requests, one at a time.
    func publisher() -> Publisher {
        Publisher(
            window: 1, freeRunning: true, answerLatency: true, check: { [self] in check($0) },
            request: { [self] _, _ in
                let page = state.withLock { $0.page }
                return .presence(.whoNow(channel: channel, includeUserId: true, includeState: includeState, page: page))
            })
    }

    /// Reads a page; false when it is not a whoNow page, counts its users wrongly, or lists a
    /// user twice in a pass or with the wrong state.
    private func check(_ answer: [UInt8]) -> Bool {
        state.withLock { state in
            var good = true
            let scan = WhoNowScan.scan(answer) { entry in
                guard let user = UserBitmap.number(of: entry.userId), state.seen.insert(user) else {
                    good = false
                    return
                }
                if includeState {
                    guard entry.stateCount == 1, let value = entry.firstValue, UserBitmap.number(of: value) == user else {
                        good = false
                        return
                    }
                } else if entry.stateCount != 0 {
                    good = false
                }
            }
            guard let scan, scan.totalOccupancy == scan.users else { return false }
            state.page = scan.nextPage
            if scan.nextPage.isEmpty {
                if state.seen.count != users { good = false }
                if good { state.passes += 1 } else { state.badPasses += 1 }
                state.seen = UserBitmap(capacity: users)
            }
            return good
        }
    }
}
