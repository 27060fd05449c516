import SwitchboardCore

/// The requests: states, whoNow, whereNow, user-level presence.
extension Presence {
    func setState(_ request: SetPresenceState) async throws(RtmError) -> Done {
        let operation = SetPresenceState.operation
        let (context, members) = try running(operation)
        let limits = context.limits(for: request.caller.app)
        let channel = try PresenceRules.channel(request.channel, of: request.caller, limits: limits, operation: operation)
        try PresenceRules.checkItems(request.items, limits: limits)
        try checkLive(request.caller, members.ended, operation)
        return try await changeState(of: request.caller, in: channel, operation, context) { shows async throws(RtmError) in
            try await store.setState(
                of: request.caller.user, in: channel, items: request.items, limits: limits, by: request.caller.session,
                shows: shows)
        }
    }

    /// The server sets a member's state: as the member's own `setState` would, every member that
    /// hears presence told, the member's own sessions too (they did not make the change).
    func setMemberState(_ request: SetMemberPresenceState) async throws(RtmError) -> Done {
        let operation = SetMemberPresenceState.operation
        let (context, _) = try running(operation)
        let limits = context.limits(for: request.caller.app)
        let channel = try PresenceRules.channel(request.channel, of: request.caller, limits: limits, operation: operation)
        try Validation.checkUserId(request.userId, limits: limits, operation: operation)
        try PresenceRules.checkItems(request.items, limits: limits)
        let user = UserKey(request.caller.app, request.userId)
        // Found in the store, so a member of any node that shares it (in a cluster) is found.
        return try await changeState(of: request.userId, in: channel, except: nil, operation, context) { () async throws(RtmError) in
            guard let found = try await store.state(of: user, in: channel) else {
                throw RtmError(
                    .presenceUserNotExist, operation: operation,
                    reason: "\(request.userId) is not in \(channel.type) channel \(channel.name)")
            }
            return found.visible
        } change: { shows async throws(RtmError) in
            try await store.setState(of: user, in: channel, items: request.items, limits: limits, by: nil, shows: shows)
        }
    }

    func removeState(_ request: RemovePresenceState) async throws(RtmError) -> Done {
        let operation = RemovePresenceState.operation
        let (context, members) = try running(operation)
        let limits = context.limits(for: request.caller.app)
        let channel = try PresenceRules.channel(request.channel, of: request.caller, limits: limits, operation: operation)
        try PresenceRules.checkKeys(request.keys, limits: limits)
        try checkLive(request.caller, members.ended, operation)
        return try await changeState(of: request.caller, in: channel, operation, context) { shows async throws(RtmError) in
            try await store.removeState(of: request.caller.user, in: channel, keys: request.keys, by: request.caller.session, shows: shows)
        }
    }

    func getState(_ request: GetPresenceState) async throws(RtmError) -> UserState {
        let operation = GetPresenceState.operation
        let (context, _) = try running(operation)
        let channel = try PresenceRules.channel(request.channel, of: request.caller, limits: context.limits, operation: operation)
        try Validation.checkUserId(request.userId, limits: context.limits, operation: operation)
        let user = UserKey(request.caller.app, request.userId)
        let found = try await turns.run { () async throws(RtmError) in try await store.state(of: user, in: channel) }
        // A quiet member is not found by others; it finds itself.
        guard let found, found.visible || user == request.caller.user else {
            throw RtmError(
                .presenceUserNotExist, operation: operation,
                reason: "\(request.userId) is not in \(channel.type) channel \(channel.name)")
        }
        return UserState(userId: request.userId, states: found.states)
    }

    func whoNow(_ request: WhoNow) async throws(RtmError) -> WhoNowPage {
        let operation = WhoNow.operation
        let (context, _) = try running(operation)
        let limits = context.limits(for: request.caller.app)
        let channel = try PresenceRules.channel(request.channel, of: request.caller, limits: limits, operation: operation)
        let cursor = try PageToken.decode(request.page)
        guard request.includeUserId || request.includeState else {
            let occupancy = try await turns.run { () async throws(RtmError) in try await store.occupancy(of: channel) }
            return WhoNowPage(totalOccupancy: occupancy, users: [], nextPage: "")
        }
        let page = try await turns.run { () async throws(RtmError) in
            try await store.members(
                of: channel, after: cursor, limit: limits.presence.whoNowPageSize, budget: PresenceSize.partBudget,
                withStates: request.includeState)
        }
        let users = request.includeUserId ? page.users : page.users.map { UserState(userId: "", states: $0.states) }
        return WhoNowPage(totalOccupancy: users.count, users: users, nextPage: PageToken.encode(page.next))
    }

    func whereNow(_ request: WhereNow) async throws(RtmError) -> [ChannelAddress] {
        let operation = WhereNow.operation
        let (context, _) = try running(operation)
        try Validation.checkUserId(request.userId, limits: context.limits, operation: operation)
        let user = UserKey(request.caller.app, request.userId)
        return try await turns.run { () async throws(RtmError) in try await store.visibleChannels(of: user) }.map(\.address)
    }

    func userPresence(_ request: GetUserPresence) async throws(RtmError) -> [UserPresence] {
        let operation = GetUserPresence.operation
        let (context, _) = try running(operation)
        let limits = context.limits(for: request.caller.app)
        try PresenceRules.checkUserIds(request.userIds, limits: limits)
        let users = request.userIds.map { UserKey(request.caller.app, $0) }
        return try await turns.run { () async throws(RtmError) in
            try await store.presence(of: users, now: context.clock.wallNow)
        }
    }

    // MARK: Helpers

    /// Refuses a request that would add state for a session that has ended.
    private func checkLive(_ caller: Caller, _ ended: EndedSessions, _ operation: String) throws(RtmError) {
        guard !ended.contains(caller.session) else {
            throw RtmError(.notLogin, operation: operation, reason: "the session has ended")
        }
    }

    /// Makes a state change of the caller's own, in its turn, and shows the result to the others
    /// unless nothing changed or the caller is quiet.
    private func changeState(
        of caller: Caller, in channel: ChannelKey, _ operation: String, _ context: ModuleContext,
        _ change: (_ shows: Bool) async throws(RtmError) -> StateChange
    ) async throws(RtmError) -> Done {
        let visible = { () throws(RtmError) in try self.member(caller, of: channel, operation).isVisible }
        return try await changeState(of: caller.userId, in: channel, except: caller.session, operation, context, visible: visible, change: change)
    }

    /// Makes a state change of `userId`'s, in its turn, once `visible` found the user in the
    /// channel, and shows the result to the members that hear presence (but `except`) unless
    /// nothing changed or the user is quiet.
    private func changeState(
        of userId: UserID, in channel: ChannelKey, except: SessionID?, _ operation: String, _ context: ModuleContext,
        visible: () async throws(RtmError) -> Bool, change: (_ shows: Bool) async throws(RtmError) -> StateChange
    ) async throws(RtmError) -> Done {
        try await turns.run { () async throws(RtmError) in
            let shows = try await visible()
            let result = try await change(shows)
            // In the turn, so the webhooks hear a user's states in the order they were made.
            if result.changed && context.bus.listenerCount(of: PresenceStateChanged.self).current > 0 {
                context.bus.publish(PresenceStateChanged(user: UserKey(channel.app, userId), channel: channel, states: result.states))
            }
            // Over a relay, the listeners hear it from the relay.
            if result.changed && shows && !isRelayed {
                try await tellOthers(
                    .stateChanged, of: userId, in: channel, states: result.states, firstOrLast: false, occupancy: 0, except: except,
                    context)
            }
            return Done()
        }
    }

    /// The features `caller`'s session is in `channel` with; `channelNotSubscribed` (message) or
    /// `channelNotJoined` (stream) when it is not in it.
    private func member(_ caller: Caller, of channel: ChannelKey, _ operation: String) throws(RtmError) -> ChannelFeatures {
        guard let features = try running(operation).1.read({ $0.features(of: caller.session, in: channel) }) else {
            throw RtmError(
                channel.type == .stream ? .channelNotJoined : .channelNotSubscribed, operation: operation,
                reason: "not in \(channel.type) channel \(channel.name); states are set by members")
        }
        return features
    }
}
