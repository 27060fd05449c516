import SwitchboardCore

extension Storage {
    // MARK: Other nodes (cluster mode; on one node nothing handles the relay's requests)

    /// Makes sure the changes other nodes commit to `target` reach this node from now on, when a
    /// relay exists; throws its error.
    func openRelay(for target: MetadataTarget, _ running: Running) async throws(RtmError) {
        guard running.context.bus.hasHandler(OpenMetadataRelay.self) else { return }
        _ = try await running.context.bus.request(OpenMetadataRelay(target))
    }

    /// `openRelay` for a channel's new listener, whose join was answered already: a failure is
    /// logged, and the listener hears this node's changes only.
    func listenToOtherNodes(for target: MetadataTarget) async {
        guard let running = try? running("snapshot") else { return }
        do {
            try await openRelay(for: target, running)
        } catch {
            running.context.log(.warning, "listeners of \(target) here miss the other nodes' changes: \(error)")
        }
    }

    /// Tells the bus that `session` now hears, or no longer hears, `user`'s metadata (when anyone
    /// there listens: the relay).
    func announce(_ session: SessionID, subscribed: Bool, to user: UserKey, _ running: Running) {
        let bus = running.context.bus
        guard bus.subscriberCount(of: UserMetadataSubscriptionChanged.self) > 0 else { return }
        bus.publish(UserMetadataSubscriptionChanged(session: session, user: user, subscribed: subscribed))
    }

    /// Another node's news of `target`: its listeners here get the set the change carries, or,
    /// when changes may have been missed (or the change cannot be read), the set read again. A
    /// listener that already has that revision or a later one gets nothing. The other node
    /// announced its change on its own bus; nothing is announced here.
    func relayed(_ request: DeliverRelayedMetadata) async {
        guard let running = try? running(DeliverRelayedMetadata.operation) else { return }
        let target = request.target
        guard hasListeners(target, running) else { return }
        if case .change(let payload) = request.news {
            if let commit = store.change(publishedAs: payload, of: target) { return await tell(commit, running) }
            running.context.log(.warning, "cannot read a change of \(target) from another node; reading the set again")
        }
        do {
            await tell(try await store.latestChange(of: target), running)
        } catch {
            running.context.log(.error, "cannot read \(target) again after changes from other nodes: \(error)")
        }
    }
}
