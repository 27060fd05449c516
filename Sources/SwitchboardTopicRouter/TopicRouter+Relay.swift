import SwitchboardCore

/// Other nodes' topic changes and topic messages, over a store that publishes them (shared by the
/// nodes of a cluster): the relay brings every change of a channel, this node's own included, in
/// the store's order, and every other node's message in its publisher's order; the router tells
/// the changes to its members there, each once, after their snapshot, and hands the messages to
/// the subscribers here.
extension TopicRouter {
    /// True when the store publishes its changes and a relay brings them: the router tells its
    /// members what the relay brings, and hands its topic messages to the store.
    var isRelayed: Bool {
        guard store.publishesChanges, case .running(let context, _) = state else { return false }
        return context.bus.hasHandler(OpenTopicRelay.self)
    }

    /// `member`, just joined, hears `channel`'s changes from now on: the relay listens first, then
    /// the member's snapshot is read, and the member hears the relayed changes numbered above it
    /// only. When the relay cannot listen, the join is undone and fails with `channelJoinFailed`.
    func startRelaying(to member: Caller, in channel: ChannelKey, _ context: ModuleContext) async throws(RtmError) -> [TopicInfo] {
        floors[channel, default: [:]][member.session] = .some(nil)
        do {
            _ = try await context.bus.request(OpenTopicRelay(channel))
            let snapshot = try await store.snapshot(of: channel)
            floors[channel]?[member.session] = snapshot.sequence
            return snapshot.topics
        } catch {
            do {
                if let departure = try await store.leave(member.session, from: channel) {
                    departed(departure, reason: .left, context)
                }
            } catch {
                context.log(.error, "cannot undo the join of \(member) to \(channel): \(error)")
            }
            throw RtmError(
                .channelJoinFailed, operation: JoinStreamChannel.operation,
                reason: "the other nodes' topics of \(channel.name) cannot reach this node now: \(error.reason)")
        }
    }

    /// `session` no longer hears `channel`'s changes.
    func stopRelaying(to session: SessionID, in channel: ChannelKey) {
        floors[channel]?[session] = nil
        if floors[channel]?.isEmpty == true { floors[channel] = nil }
    }

    /// News of a stream channel from the relay: another node's message goes to the subscribers
    /// here at once; a change is told to the members here whose snapshot does not show it (but
    /// the session that made it); after a gap, every member here gets a new snapshot (retried for
    /// up to 30 s).
    func relayed(_ request: DeliverRelayedTopics) async {
        guard case .running(let context, _) = state else { return }
        let channel = request.channel
        do {
            switch request.news {
            case .published(let payload):
                switch store.news(publishedAs: payload) {
                case .message(let message)?:
                    // Not in a turn: the receivers are this node's, and a message must not wait
                    // behind a join that waits for Redis.
                    try await deliver(message, context)
                case .change(let change)? where change.channel == channel:
                    try await turns.run { () async throws(RtmError) in tell(change, context) }
                case .echo?:
                    return
                default:
                    context.log(.warning, "skipped an unreadable topic change or message of \(channel)")
                }
            case .mayHaveMissedChanges:
                // Retried while the store's connection comes back: a member must not keep the
                // numbers of what Redis held before it restarted.
                try await RealTimeRetry.run(attempts: 150, pause: .milliseconds(200)) { () async throws(RtmError) in
                    try await turns.run { () async throws(RtmError) in try await sendSnapshotsAgain(in: channel, context) }
                }
            }
        } catch {
            context.log(.error, "the relayed topics of \(channel): \(error)")
        }
    }

    /// Hands another node's topic message to this node's subscribers of its publisher there.
    private func deliver(_ message: TopicMessage, _ context: ModuleContext) async throws(RtmError) {
        let delivery = message.delivery
        let receivers = try await store.receivers(of: delivery.publisher, in: delivery.channelTopic, of: message.channel)
        guard !receivers.isEmpty else { return }
        context.outbox.deliver(.message(delivery), to: receivers, priority: message.priority)
    }

    /// Tells `change` to the members of its channel here whose snapshot came before it.
    private func tell(_ change: PublishedTopicChange, _ context: ModuleContext) {
        let listening = floors[change.channel] ?? [:]
        let receivers = members.members(of: change.channel).map(\.session).filter { session in
            guard session != change.except, let floor = listening[session], let floor else { return false }
            return floor < change.sequence
        }
        guard !receivers.isEmpty else { return }
        let event = TopicEvent(
            type: change.type, channelName: change.channel.name, publisher: change.publisher, topicInfos: change.topics,
            timestamp: context.clock.wallMilliseconds)
        context.outbox.deliver(.topic(event), to: receivers)
    }

    /// Sends every member of `channel` here a new snapshot, from which it hears the changes after.
    private func sendSnapshotsAgain(in channel: ChannelKey, _ context: ModuleContext) async throws(RtmError) {
        let listening = floors[channel] ?? [:]
        let here = members.members(of: channel).filter { listening[$0.session] != nil }
        guard !here.isEmpty else { return }
        let snapshot = try await store.snapshot(of: channel)
        for member in here {
            floors[channel]?[member.session] = snapshot.sequence
            let event = TopicEvent(
                type: .snapshot, channelName: channel.name, publisher: member.user, topicInfos: [],
                timestamp: context.clock.wallMilliseconds)
            for part in TopicParts.snapshot(snapshot.topics, as: event) {
                context.outbox.deliver(.topic(part), to: [member.session])
            }
        }
    }
}
