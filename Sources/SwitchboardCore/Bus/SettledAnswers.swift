extension BusSubscription {
    /// Returns once this subscription has handled every event published before the call,
    /// including one whose publish is still handing it to subscribers (another subscriber may
    /// have handled it already and asked this one something because of it).
    public func settle() async {
        // Nothing queued or being handled: settled already, with no marker to wait for (a lock
        // request behind its holder's release would otherwise wake the mailbox's task for it).
        if let bus, bus.hasHandledEverythingPublished(mailbox) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            guard let bus else { return mailbox.post(Settled()) { continuation.resume() } }
            bus.post(Settled(), inPublishOrderTo: mailbox) { continuation.resume() }
        }
    }

    /// Makes `handler` the one handler of requests of type `R`, each run once this subscription
    /// has handled every event published before the request: a module that learns from events
    /// (who joined which channel) answers a client that subscribed, got its answer and then asks,
    /// with the join applied. Returns the subscription, so calls chain.
    @discardableResult
    public func answer<R: BusRequest>(
        _ type: R.Type, _ handler: @escaping @Sendable (R) async throws(RtmError) -> R.Response
    ) -> BusSubscription {
        bus?.handle(type) { [self] request throws(RtmError) in
            await settle()
            return try await handler(request)
        }
        return self
    }
}

/// The marker `settle` queues behind the subscription's events; no handler takes it.
private struct Settled: BusEvent {}
