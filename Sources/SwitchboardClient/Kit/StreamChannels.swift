import SwitchboardCore
import SwitchboardWire

/// The stream channels of one client: the names with a live `RtmStreamChannel`, and for each
/// joined channel what rebuilds it when the server has lost the session (a reconnect after the
/// presence timeout): the join with its token and features, the topics joined, the publishers
/// subscribed to. A resumed session keeps them on the server, so nothing is sent then.
final class StreamChannels: RestorableState {
    /// A cluster node that takes a session over ends its stream channels: they are joined again.
    var movesWithSession: Bool { false }

    /// What the client holds in one joined stream channel.
    struct Membership: Sendable {
        var token: String
        var features: RtmJoinChannelFeature
        var topics: [String: TopicJoinOptions] = [:]
        var subscriptions: [String: Set<String>] = [:]
    }

    /// The token and features a join got in with.
    struct JoinedWith: Sendable {
        var token: String
        var features: RtmJoinChannelFeature
    }

    /// A join waiting for its answer: its number, what cancels its call, and where the answer
    /// goes (what it joined with; nil when it failed) for a newer join of the channel to wait on.
    struct JoinAttempt: Sendable {
        let ticket: Int
        let earlier: OneShot<JoinedWith?>?
        let answered = OneShot<JoinedWith?>()
    }

    private struct State {
        var instances: Set<String> = []
        var joined: [String: Membership] = [:]
        /// The latest join of each channel still waiting for its answer, with what cancels its call.
        var joining: [String: (attempt: JoinAttempt, cancel: @Sendable () -> Void)] = [:]
        var tickets = 0
    }

    private let state = Locked(State())

    var serviceType: RtmServiceType { .stream }

    /// Reserves `name` for a new instance; false when a live instance has it.
    func claim(_ name: String) -> Bool { state.withLock { $0.instances.insert(name).inserted } }

    /// Frees `name` (its instance was destroyed).
    func release(_ name: String) { state.withLock { _ = $0.instances.remove(name) } }

    /// Starts a join of `name`; a join of it still waiting is canceled (`cancel` of that one
    /// runs) and handed back as `earlier`, so the new one can wait for the server's answer to it.
    func beginJoin(_ name: String, cancel: @escaping @Sendable () -> Void) -> JoinAttempt {
        let (attempt, canceled) = state.withLock { state in
            state.tickets += 1
            let earlier = state.joining[name]
            let attempt = JoinAttempt(ticket: state.tickets, earlier: earlier?.attempt.answered)
            state.joining[name] = (attempt, cancel)
            return (attempt, earlier?.cancel)
        }
        canceled?()
        return attempt
    }

    /// Ends join `ticket` of `name`; false when a newer join canceled it.
    func endJoin(_ name: String, _ ticket: Int) -> Bool {
        state.withLock { state in
            guard state.joining[name]?.attempt.ticket == ticket else { return false }
            state.joining[name] = nil
            return true
        }
    }

    /// Records a successful join.
    func joined(_ name: String, token: String, features: RtmJoinChannelFeature) {
        state.withLock { $0.joined[name] = Membership(token: token, features: features) }
    }

    /// Records a leave.
    func left(_ name: String) { state.withLock { _ = $0.joined.removeValue(forKey: name) } }

    /// Whether `name` is joined.
    func isJoined(_ name: String) -> Bool { state.withLock { $0.joined[name] != nil } }

    /// Changes what is recorded for a joined channel (nothing when it is not joined).
    func update(_ name: String, _ change: (inout Membership) -> Void) {
        state.withLock { state in
            guard var membership = state.joined[name] else { return }
            change(&membership)
            state.joined[name] = membership
        }
    }

    var channels: [String] { state.withLock { $0.joined.keys.sorted() } }

    func restore(_ send: @Sendable (ClientOperation) async -> Result<Answer, RtmErrorInfo>) async -> [String] {
        var unrestored: [String] = []
        for (name, membership) in state.withLock({ $0.joined.sorted { $0.key < $1.key } }) {
            guard case .success = await send(.stream(.join(channel: name, token: membership.token, features: membership.features)))
            else {
                left(name)
                unrestored.append(name)
                continue
            }
            var complete = true
            for (topic, options) in membership.topics.sorted(by: { $0.key < $1.key }) {
                if case .failure = await send(.stream(.joinTopic(channel: name, topic: topic, options: options))) {
                    update(name) { $0.topics[topic] = nil }
                    complete = false
                }
            }
            for (topic, users) in membership.subscriptions.sorted(by: { $0.key < $1.key }) {
                if case .failure = await send(.stream(.subscribeTopic(channel: name, topic: topic, users: users.sorted()))) {
                    update(name) { $0.subscriptions[topic] = nil }
                    complete = false
                }
            }
            if !complete { unrestored.append(name) }
        }
        return unrestored
    }

    func reset() { state.withLock { $0.joined.removeAll() } }
}
