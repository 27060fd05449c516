import Synchronization
import SwitchboardCore
import SwitchboardRedis

/// What reaches this node from the others: each message the subscriber hands over, decoded and
/// delivered to this node's listeners at once, on the subscriber's loop and in the order Redis
/// sent them (so each publisher's order holds); each metadata change, handed to the storage
/// module in that order too (one at a time, it being an actor), as are lock and presence changes; and the subscriber link's losses
/// and gaps, after which the storage module reads every set it listens to again.
final class InboundRelay: Sendable {
    private let nodeID: String
    /// Where this node's probes are noted as they come back.
    let health: NodeHealth
    private let context = Mutex<ModuleContext?>(nil)
    /// Told each time the subscriber's link is back.
    private let restored = Mutex<(@Sendable () -> Void)?>(nil)
    private let counters = Mutex(RelayCounters())
    /// The metadata news on their way to the storage module, in the order they came.
    private let metadataNews = SerialJobs()
    /// The lock news on their way to the lock module, in the order they came.
    private let lockNews = SerialJobs()
    /// The presence news on their way to the presence module, in the order they came.
    private let presenceNews = SerialJobs()
    /// The stream channels' news on their way to the topic router, in the order they came.
    private let topicNews = SerialJobs()
    /// The newest login of each user this node knows of.
    let claims = Mutex(UserClaims())
    /// The commands this node asked of the nodes holding a user, waiting for their answers.
    let commandWaits = UserCommandWaits()
    /// Carries out a command another node (or this one) asked of the nodes holding a user.
    private let commands = Mutex<(@Sendable (UserCommandAnnouncement) -> Void)?>(nil)

    init(nodeID: String) {
        self.nodeID = nodeID
        health = NodeHealth(nodeID: nodeID)
    }

    /// Starts delivering to the modules of `context`; before, messages are dropped (nothing is
    /// subscribed before the link starts). `linkRestored` is called each time the subscriber's
    /// link comes back.
    func attach(_ context: ModuleContext, linkRestored: @escaping @Sendable () -> Void) {
        self.context.withLock { $0 = context }
        restored.withLock { $0 = linkRestored }
    }

    /// Has `carryOut` run each command on a user's sessions that reaches this node.
    func onCommand(_ carryOut: @escaping @Sendable (UserCommandAnnouncement) -> Void) {
        commands.withLock { $0 = carryOut }
    }

    /// Logs `message` at `level` once attached.
    func log(_ level: SwitchboardLog.Level, _ message: @autoclosure () -> String) {
        context.withLock { $0 }?.log(level, message())
    }

    /// A message this node accepted did not reach Redis.
    func notRelayed(_ error: RedisError) {
        counters.withLock { counters in
            counters.notRelayed += 1
            counters.lastRelayError = error
        }
    }

    /// How many messages did not reach Redis since the last call, with the last error; nil for none.
    func takeNotRelayed() -> (count: Int, error: RedisError)? {
        counters.withLock { counters in
            defer { counters.notRelayedSinceTaken = counters.notRelayed }
            let count = counters.notRelayed - counters.notRelayedSinceTaken
            guard count > 0, let error = counters.lastRelayError else { return nil }
            return (count, error)
        }
    }

    /// What the relay has seen so far.
    var seen: RelayCounters { counters.withLock { $0 } }

    /// Handles one event of the subscriber, on its loop.
    func handle(_ event: RedisSubscriberEvent) {
        guard let context = context.withLock({ $0 }) else { return }
        switch event {
        case .message(let message) where message.channel == health.channel:
            if let answer = UserCommandAnswer(decoding: message.payload) {
                commandWaits.heard(answer)
            } else {
                health.probeCameBack(at: context.clock.now)
            }
        case .message(let message):
            if let target = MetadataKeys.target(ofChannel: message.channel) {
                counters.withLock { $0.metadataChanges += 1 }
                tell(target, .change(message.payload), context)
            } else if let channel = LockKeys.channel(ofEvents: message.channel) {
                counters.withLock { $0.lockChanges += 1 }
                tell(channel, RelayedLocks.change(message.payload), context)
            } else if let channel = PresenceKeys.channel(ofEvents: message.channel) {
                counters.withLock { $0.presenceChanges += 1 }
                tell(channel, RelayedPresence.change(message.payload), context)
            } else if let channel = TopicKeys.channel(ofEvents: message.channel) {
                counters.withLock { $0.topicNews += 1 }
                tell(channel, RelayedTopics.published(message.payload), context)
            } else {
                deliver(message, context)
            }
        case .linkLost(let error):
            counters.withLock { $0.linkLosses += 1 }
            context.log(.warning, "the link to Redis pub/sub is lost (\(error)); messages from other nodes are missed until it is back")
        case .linkRestored(let gap):
            counters.withLock { $0.gaps += gap.count }
            context.log(.warning, "the link to Redis pub/sub is back; \(gap.count) channels may have missed messages meanwhile")
            for target in gap.compactMap(MetadataKeys.target(ofChannel:)) { tell(target, .mayHaveMissedChanges, context) }
            for channel in gap.compactMap(LockKeys.channel(ofEvents:)) { tell(channel, RelayedLocks.mayHaveMissedChanges, context) }
            for channel in gap.compactMap(PresenceKeys.channel(ofEvents:)) {
                tell(channel, RelayedPresence.mayHaveMissedChanges, context)
            }
            let messageTargets = gap.compactMap(RelayChannels.target(of:))
            if !messageTargets.isEmpty { context.bus.publish(RelayGapped(targets: messageTargets)) }
            for channel in gap.compactMap(TopicKeys.channel(ofEvents:)) { tell(channel, RelayedTopics.mayHaveMissedChanges, context) }
            restored.withLock { $0 }?()
        }
    }

    /// Stops handing metadata news over once what is queued is handed over.
    func finish() {
        metadataNews.finish()
        lockNews.finish()
        presenceNews.finish()
        topicNews.finish()
    }

    /// Hands `news` of `target` to the storage module behind the news before it.
    private func tell(_ target: MetadataTarget, _ news: RelayedMetadata, _ context: ModuleContext) {
        hand(DeliverRelayedMetadata(target: target, news: news), behind: metadataNews, context) {
            "cannot hand a metadata change of \(target) to the storage module: \($0)"
        }
    }

    /// Hands `news` of `channel`'s locks to the lock module behind the news before it.
    private func tell(_ channel: ChannelKey, _ news: RelayedLocks, _ context: ModuleContext) {
        hand(DeliverRelayedLocks(channel: channel, news: news), behind: lockNews, context) {
            "cannot hand a lock change of \(channel) to the lock module: \($0)"
        }
    }

    /// Hands `news` of `channel`'s presence to the presence module behind the news before it.
    private func tell(_ channel: ChannelKey, _ news: RelayedPresence, _ context: ModuleContext) {
        hand(DeliverRelayedPresence(channel: channel, news: news), behind: presenceNews, context) {
            "cannot hand a presence change of \(channel) to the presence module: \($0)"
        }
    }

    /// Hands `news` of stream channel `channel` to the topic router behind the news before it.
    private func tell(_ channel: ChannelKey, _ news: RelayedTopics, _ context: ModuleContext) {
        hand(DeliverRelayedTopics(channel: channel, news: news), behind: topicNews, context) {
            "cannot hand the topic news of \(channel) to the topic router: \($0)"
        }
    }

    /// Sends `request` once what `queue` holds before it is answered; logs its failure.
    private func hand<Request: BusRequest>(
        _ request: Request, behind queue: SerialJobs, _ context: ModuleContext,
        failure: @escaping @Sendable (any Error) -> String
    ) {
        let bus = context.bus
        queue.enqueue {
            do {
                _ = try await bus.request(request)
            } catch {
                context.log(.warning, failure(error))
            }
        }
    }

    /// Ends `replaced`, a session of this node whose user logged in later on another node.
    func endReplaced(_ replaced: Caller) {
        guard let context = context.withLock({ $0 }) else { return }
        let bus = context.bus
        Task {
            do {
                _ = try await bus.request(EndReplacedSession(caller: replaced))
            } catch {
                context.log(.warning, "cannot end \(replaced), replaced by a login on another node: \(error)")
            }
        }
    }

    private func deliver(_ message: RedisMessage, _ context: ModuleContext) {
        if let command = UserCommandAnnouncement(decoding: message.payload) {
            commands.withLock { $0 }?(command)
            return
        }
        if let moved = MovedSessionAnnouncement(decoding: message.payload) {
            // A session taken over from this node's own earlier run goes on here: nothing to end.
            guard moved.former == nodeID, moved.taker != nodeID else { return }
            let bus = context.bus
            Task {
                do {
                    _ = try await bus.request(EndMovedSession(caller: moved.caller))
                } catch {
                    context.log(.warning, "cannot end \(moved.caller), taken over by node \(moved.taker): \(error)")
                }
            }
            return
        }
        if let claim = UserClaimAnnouncement(decoding: message.payload) {
            guard claim.origin != nodeID else { return }
            if let replaced = claims.withLock({ $0.heard(claim.user, generation: claim.generation) }) { endReplaced(replaced) }
            return
        }
        let envelope: RelayEnvelope
        do {
            envelope = try RelayEnvelope(decoding: message.payload)
        } catch {
            counters.withLock { $0.undecodable += 1 }
            context.log(.warning, "skipped an undecodable message on \(message.channel): \(error)")
            return
        }
        // This node delivered its own messages when it accepted them.
        guard envelope.origin != nodeID else { return }
        counters.withLock { $0.received += 1 }
        let request = DeliverRelayedMessage(target: envelope.target, delivery: envelope.delivery)
        do {
            if try context.bus.answerAtOnce(DeliverRelayedMessage.self, { request }) != nil { return }
        } catch {
            context.log(.warning, "cannot deliver a message from node \(envelope.origin): \(error)")
            return
        }
        // No module answers at once: hand it over in a task (order is then the bus's).
        let bus = context.bus
        Task { _ = try? await bus.request(request) }
    }
}

/// Counts of what came in from the other nodes.
public struct RelayCounters: Sendable, Hashable {
    /// Messages from other nodes handed to this node's modules.
    public var received = 0
    /// Messages that could not be read.
    public var undecodable = 0
    /// Times the pub/sub link dropped.
    public var linkLosses = 0
    /// Channels that may have missed messages while the link was down.
    public var gaps = 0
    /// Messages accepted on this node that did not reach Redis (the other nodes missed them).
    public var notRelayed = 0
    var notRelayedSinceTaken = 0
    var lastRelayError: RedisError?
    /// Metadata changes handed to this node's storage module.
    public var metadataChanges = 0
    /// Changes of locks handed to this node's lock module.
    public var lockChanges = 0
    /// Changes of presence handed to this node's presence module.
    public var presenceChanges = 0
    /// Topic changes and topic messages (this node's own included) handed to this node's topic router.
    public var topicNews = 0
}
