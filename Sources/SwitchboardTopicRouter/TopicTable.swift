import SwitchboardCore

/// The pure state behind `InMemoryTopicStore`: dictionaries keyed by app-scoped channel, topic and
/// publisher, so a publish finds its receivers with a few hash lookups (a cached array per
/// publisher), never by scanning the channel's members. Each mutating method is one
/// check-and-change, as `TopicStore` describes it.
struct TopicTable: Sendable {
    private struct Member {
        var caller: Caller
        var features: RtmJoinChannelFeature
        /// Topics it publishes in, with its options.
        var published: [String: TopicJoinOptions] = [:]
        /// Topics it subscribes to, with the publishers it chose.
        var subscriptions: [String: Set<UserID>] = [:]
    }

    private struct Publisher {
        var session: SessionID
        var options: TopicJoinOptions
        /// Join order within the store, so snapshots list publishers in the order they came.
        var sequence: UInt64
    }

    private struct Topic {
        var publishers: [UserID: Publisher] = [:]
        /// Publisher → the sessions subscribed to it.
        var subscribers: [UserID: Set<SessionID>] = [:]
        /// Publisher → its subscribers in session order; absent when stale.
        var receivers: [UserID: [SessionID]] = [:]

        var isEmpty: Bool { publishers.isEmpty && subscribers.isEmpty }

        var orderedPublishers: [(userId: UserID, publisher: Publisher)] {
            publishers.map { ($0.key, $0.value) }.sorted { $0.publisher.sequence < $1.publisher.sequence }
        }

        mutating func addSubscriber(_ session: SessionID, to publisher: UserID) {
            subscribers[publisher, default: []].insert(session)
            receivers[publisher] = nil
        }

        mutating func removeSubscriber(_ session: SessionID, from publisher: UserID) {
            subscribers[publisher]?.remove(session)
            if subscribers[publisher]?.isEmpty == true { subscribers[publisher] = nil }
            receivers[publisher] = nil
        }
    }

    private struct Channel {
        var members: [SessionID: Member] = [:]
        /// Members in session order; nil when stale.
        var memberList: [SessionID]? = []
        var topics: [String: Topic] = [:]
    }

    private var channels: [ChannelKey: Channel] = [:]
    private var joined: [SessionID: Set<ChannelKey>] = [:]
    private var sequence: UInt64 = 0

    /// An empty table.
    init() {}

    // MARK: Channels

    mutating func join(_ member: StreamMember, to channel: ChannelKey, limits: Limits) throws(RtmError) -> [TopicInfo] {
        let session = member.caller.session
        let operation = JoinStreamChannel.operation
        guard channels[channel]?.members[session] == nil else {
            throw RtmError(.duplicateOperation, operation: operation, reason: "already joined \(channel.name)")
        }
        guard (joined[session]?.count ?? 0) < limits.streams.joinedChannelsPerClient else {
            throw RtmError(
                .channelInstanceExceedLimitation, operation: operation,
                reason: "already joined \(limits.streams.joinedChannelsPerClient) stream channels")
        }
        guard (channels[channel]?.members.count ?? 0) < limits.streams.usersPerChannel else {
            throw RtmError(
                .channelJoinFailed, operation: operation,
                reason: "\(channel.name) already has \(limits.streams.usersPerChannel) users")
        }
        channels[channel, default: Channel()].members[session] = Member(caller: member.caller, features: member.features)
        channels[channel]?.memberList = nil
        joined[session, default: []].insert(channel)
        return topics(of: channel)
    }

    mutating func leave(_ session: SessionID, from channel: ChannelKey) -> StreamDeparture? {
        guard var entry = channels[channel], let member = entry.members.removeValue(forKey: session) else { return nil }
        entry.memberList = nil
        var left: [TopicInfo] = []
        for (name, options) in member.published.sorted(by: { $0.key < $1.key }) {
            if entry.topics[name]?.publishers[member.caller.userId]?.session == session {
                entry.topics[name]?.publishers[member.caller.userId] = nil
            }
            left.append(TopicInfo(topic: name, publishers: [TopicPublisher(userId: member.caller.userId, meta: options.meta)]))
        }
        for (name, publishers) in member.subscriptions {
            for publisher in publishers { entry.topics[name]?.removeSubscriber(session, from: publisher) }
        }
        entry.topics = entry.topics.filter { !$0.value.isEmpty }
        channels[channel] = entry.members.isEmpty ? nil : entry
        joined[session]?.remove(channel)
        if joined[session]?.isEmpty == true { joined[session] = nil }
        return StreamDeparture(channel: channel, caller: member.caller, topics: left)
    }

    /// Every membership, by channel then session, with the topics each publishes in and their
    /// metadata.
    var memberships: [HeldStreamMembership] {
        channels.sorted { $0.key.description < $1.key.description }.flatMap { channel, entry in
            entry.members.sorted { $0.key < $1.key }.map { _, member in
                HeldStreamMembership(
                    member: member.caller, channel: channel, topics: member.published.mapValues(\.meta))
            }
        }
    }

    mutating func leaveAll(_ session: SessionID) -> [StreamDeparture] {
        (joined[session] ?? []).sorted { $0.name < $1.name }.compactMap { leave(session, from: $0) }
    }

    func isMember(_ session: SessionID, of channel: ChannelKey) -> Bool {
        channels[channel]?.members[session] != nil
    }

    mutating func members(of channel: ChannelKey) -> [SessionID] {
        guard let entry = channels[channel] else { return [] }
        if let list = entry.memberList { return list }
        let list = entry.members.keys.sorted()
        channels[channel]?.memberList = list
        return list
    }

    func topics(of channel: ChannelKey) -> [TopicInfo] {
        guard let entry = channels[channel] else { return [] }
        return entry.topics.filter { !$0.value.publishers.isEmpty }.sorted { $0.key < $1.key }.map { name, topic in
            TopicInfo(
                topic: name,
                publishers: topic.orderedPublishers.map { TopicPublisher(userId: $0.userId, meta: $0.publisher.options.meta) })
        }
    }

    // MARK: Publishers

    mutating func joinTopic(
        _ session: SessionID, _ topic: String, in channel: ChannelKey, options: TopicJoinOptions, limits: Limits,
        operation: String
    ) throws(RtmError) -> TopicPublisher {
        let member = try self.member(session, of: channel, operation: operation)
        guard member.published[topic] == nil else {
            throw RtmError(.duplicateOperation, operation: operation, reason: "already joined topic \(topic)")
        }
        guard member.published.count < limits.streams.joinedTopicsPerChannel else {
            throw RtmError(
                .channelJoinTopicFailed, operation: operation,
                reason: "already joined \(limits.streams.joinedTopicsPerChannel) topics in \(channel.name)")
        }
        sequence += 1
        channels[channel]?.members[session]?.published[topic] = options
        channels[channel]?.topics[topic, default: Topic()].publishers[member.caller.userId] =
            Publisher(session: session, options: options, sequence: sequence)
        return TopicPublisher(userId: member.caller.userId, meta: options.meta)
    }

    mutating func leaveTopic(
        _ session: SessionID, _ topic: String, in channel: ChannelKey, operation: String
    ) throws(RtmError) -> TopicPublisher {
        let publication = try self.publication(of: session, in: topic, of: channel, operation: operation)
        channels[channel]?.members[session]?.published[topic] = nil
        if channels[channel]?.topics[topic]?.publishers[publication.userId]?.session == session {
            channels[channel]?.topics[topic]?.publishers[publication.userId] = nil
        }
        if channels[channel]?.topics[topic]?.isEmpty == true { channels[channel]?.topics[topic] = nil }
        return TopicPublisher(userId: publication.userId, meta: publication.options.meta)
    }

    func publication(
        of session: SessionID, in topic: String, of channel: ChannelKey, operation: String
    ) throws(RtmError) -> TopicPublication {
        let member = try self.member(session, of: channel, operation: operation)
        guard let options = member.published[topic] else {
            throw RtmError(.channelTopicNotJoined, operation: operation, reason: "topic \(topic) is not joined")
        }
        return TopicPublication(userId: member.caller.userId, options: options)
    }

    mutating func receivers(of publisher: UserID, in topic: String, of channel: ChannelKey) -> [SessionID] {
        guard let entry = channels[channel]?.topics[topic] else { return [] }
        if let cached = entry.receivers[publisher] { return cached }
        let list = (entry.subscribers[publisher] ?? []).sorted()
        channels[channel]?.topics[topic]?.receivers[publisher] = list
        return list
    }

    // MARK: Subscriptions

    /// Subscribes as `TopicStore.subscribe` says; without `users`, to `publishers` (in join
    /// order) when given, else to this table's publishers of the topic.
    mutating func subscribe(
        _ session: SessionID, to users: [UserID]?, in topic: String, of channel: ChannelKey, limits: Limits,
        operation: String, publishers given: [UserID]? = nil
    ) throws(RtmError) -> TopicSubscription {
        let member = try self.member(session, of: channel, operation: operation)
        let current = member.subscriptions[topic] ?? []
        let publishers = given ?? channels[channel]?.topics[topic]?.orderedPublishers.map(\.userId) ?? []
        let room = max(0, limits.streams.publishersPerTopicSubscription - current.count)
        var succeeded: [UserID] = []
        var failed: [UserID] = []
        var added: [UserID] = []
        if let users {
            var seen = Set<UserID>()
            for user in users where seen.insert(user).inserted {
                if current.contains(user) {
                    succeeded.append(user)
                } else if (try? Validation.checkUserId(user, limits: limits, operation: operation)) != nil {
                    added.append(user)
                    succeeded.append(user)
                } else {
                    failed.append(user)
                }
            }
            guard added.count <= room else {
                throw RtmError(
                    .channelExceedTopicUserLimitation, operation: operation,
                    reason: "a topic subscription holds at most \(limits.streams.publishersPerTopicSubscription) publishers")
            }
        } else {
            for user in publishers {
                if current.contains(user) {
                    succeeded.append(user)
                } else if added.count < room {
                    added.append(user)
                    succeeded.append(user)
                } else {
                    failed.append(user)
                }
            }
        }
        if current.isEmpty && !added.isEmpty && member.subscriptions.count >= limits.streams.subscribedTopicsPerChannel {
            throw RtmError(
                .channelExceedTopicLimitation, operation: operation,
                reason: "already subscribed to \(limits.streams.subscribedTopicsPerChannel) topics in \(channel.name)")
        }
        if !added.isEmpty {
            channels[channel]?.members[session]?.subscriptions[topic, default: []].formUnion(added)
            for user in added { channels[channel]?.topics[topic, default: Topic()].addSubscriber(session, to: user) }
        }
        return TopicSubscription(succeedUsers: succeeded, failedUsers: failed)
    }

    mutating func unsubscribe(
        _ session: SessionID, from users: [UserID]?, in topic: String, of channel: ChannelKey, operation: String
    ) throws(RtmError) {
        let member = try self.member(session, of: channel, operation: operation)
        guard let current = member.subscriptions[topic] else {
            throw RtmError(.channelTopicNotSubscribed, operation: operation, reason: "topic \(topic) is not subscribed")
        }
        let removed = users.map { current.intersection($0) } ?? current
        let remaining = current.subtracting(removed)
        channels[channel]?.members[session]?.subscriptions[topic] = remaining.isEmpty ? nil : remaining
        for user in removed { channels[channel]?.topics[topic]?.removeSubscriber(session, from: user) }
        if channels[channel]?.topics[topic]?.isEmpty == true { channels[channel]?.topics[topic] = nil }
    }

    // MARK: Helpers

    private func member(_ session: SessionID, of channel: ChannelKey, operation: String) throws(RtmError) -> Member {
        guard let member = channels[channel]?.members[session] else {
            throw RtmError(.channelNotJoined, operation: operation, reason: "stream channel \(channel.name) is not joined")
        }
        return member
    }
}
