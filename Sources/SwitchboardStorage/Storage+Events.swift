import SwitchboardCore

extension Storage {
    // MARK: Who listens

    /// Acts on a change of membership, already applied to the roster: a member that now hears
    /// metadata gets the channel's set, one that stops is forgotten, an ended session's bound
    /// items go.
    func membershipChanged(_ update: MembershipUpdate) async {
        switch update {
        case .changed(let change):
            let target = MetadataTarget.channel(change.channel)
            if change.gained(.metadata) {
                await listenToOtherNodes(for: target)
                await sendSnapshot(of: target, to: change.member.session)
            } else if change.lost(.metadata) {
                audience.forget(change.member.session, target)
            }
        case .sessionEnded(let event, _):
            let users = audience.removeAll(of: event.session)
            if let running = try? running("sessionClosed") {
                for user in users { announce(event.session, subscribed: false, to: user, running) }
            }
            await removeItems(of: event.session)
        }
    }

    /// The sessions that hear about `target` now, in session order.
    private func listeners(of target: MetadataTarget, _ running: Running) -> [SessionID] {
        switch target {
        case .channel(let channel): running.members.read { $0.listeners(of: channel, hearing: .metadata) }
        case .user(let user): audience.subscribers(of: user)
        }
    }

    /// Whether `session` hears about `target` now.
    private func isListening(_ session: SessionID, to target: MetadataTarget, _ running: Running) -> Bool {
        switch target {
        case .channel(let channel): running.members.read { $0.features(of: session, in: channel)?.contains(.metadata) ?? false }
        case .user(let user): audience.isSubscribed(session, to: user)
        }
    }

    /// Binds the items of a session another node held to it here (nobody is told: nothing they
    /// see changes).
    func takenOver(_ event: SessionTakenOver) async {
        guard let running = try? running("takeOver") else { return }
        do {
            try await store.takeOver(event.caller.session, fromNode: event.formerNode)
        } catch {
            running.context.log(.error, "cannot bind the items of \(event.caller.session) here: \(error)")
        }
    }

    /// Removes the items bound to `session` and tells their listeners.
    func removeItems(of session: SessionID) async {
        guard let running = try? running("sessionClosed") else { return }
        do {
            for commit in try await store.removeItems(of: session) { await publish(commit, author: "") }
        } catch {
            running.context.log(.error, "cannot remove the items of \(session): \(error)")
        }
    }

    /// Removes the items whose time to live ran out and tells their listeners.
    func sweepLeases() async {
        guard let running = try? running("expire") else { return }
        do {
            for commit in try await store.removeExpired(now: running.context.clock.wallNow) {
                await publish(commit, author: "")
            }
        } catch {
            running.context.log(.error, "cannot remove expired items: \(error)")
        }
    }

    // MARK: Telling

    /// Tells the listeners of `commit.target` (the whole set, as the reference's full-data mode
    /// does), and the bus if anyone there listens.
    func publish(_ commit: MetadataCommit, author: UserID) async {
        guard let running = try? running("update") else { return }
        let bus = running.context.bus
        if bus.subscriberCount(of: MetadataChanged.self) > 0 {
            bus.publish(
                MetadataChanged(target: commit.target, author: author, revision: commit.revision, itemCount: commit.set?.items.count ?? 0))
        }
        await tell(commit, running, inOrder: store.publishesChanges && running.context.bus.hasHandler(OpenMetadataRelay.self))
    }

    /// Whether anyone on this node hears about `target` now.
    func hasListeners(_ target: MetadataTarget, _ running: Running) -> Bool {
        !listeners(of: target, running).isEmpty
    }

    /// Tells the listeners of `commit.target` that have not had that revision or a later one.
    ///
    /// `inOrder` (a change committed here, with other nodes): only listeners that have the
    /// revision before it are told now. A listener behind that still has another node's earlier
    /// change to hear, which comes through the relay; the relay brings this node's own change
    /// after it, so every listener hears every revision, in order.
    func tell(_ commit: MetadataCommit, _ running: Running, inOrder: Bool = false) async {
        guard hasListeners(commit.target, running) else { return }
        let data: Metadata
        do {
            data = try await metadata(commit.set, of: commit.target, operation: "update")
        } catch {
            running.context.log(.error, "cannot tell about \(commit.target): \(error)")
            return
        }
        // Chosen after the await: a listener that already got a newer set does not get this one.
        let listening = listeners(of: commit.target, running)
        let receivers =
            inOrder
            ? audience.dueNext(listening, commit.target, revision: commit.revision)
            : audience.due(listening, commit.target, revision: commit.revision)
        guard !receivers.isEmpty else { return }
        running.context.outbox.deliver(.storage(event(.update, commit.target, data, running)), to: receivers)
    }

    /// Sends the set of `target` as it is now to `session` (on subscribe or join).
    func sendSnapshot(of target: MetadataTarget, to session: SessionID) async {
        guard let running = try? running("snapshot") else { return }
        let data: Metadata
        do {
            data = try await metadata(try await store.read(target), of: target, operation: "snapshot")
        } catch {
            running.context.log(.error, "cannot read \(target) for a snapshot: \(error)")
            return
        }
        guard isListening(session, to: target, running),
            !audience.due([session], target, revision: data.majorRevision).isEmpty
        else { return }
        running.context.outbox.deliver(.storage(event(.snapshot, target, data, running)), to: [session])
    }

    private func event(_ type: RtmStorageEventType, _ target: MetadataTarget, _ data: Metadata, _ running: Running) -> StorageEvent {
        let timestamp = running.context.clock.wallMilliseconds
        switch target {
        case .channel(let channel):
            return StorageEvent(
                channelType: channel.type, storageType: .channel, eventType: type, target: channel.name, data: data,
                timestamp: timestamp)
        case .user(let user):
            return StorageEvent(
                channelType: .user, storageType: .user, eventType: type, target: user.userId, data: data, timestamp: timestamp)
        }
    }
}
