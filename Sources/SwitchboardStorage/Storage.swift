import SwitchboardCore

/// The storage module: channel and user metadata with compare-and-set revisions, kept in a
/// `MetadataStore` (SQLite by default in a server), and the storage events that tell channel
/// members and user-metadata subscribers about each change, each app on its own.
///
/// It answers the `…ChannelMetadata` and `…UserMetadata` requests and `SubscribeUserMetadata` /
/// `UnsubscribeUserMetadata`, and the server's `StorageStatistics`; asks `CheckLockHolder` for
/// writes that name a lock, and
/// `SealAtRest` / `OpenAtRest` when a storage key is configured; keeps channel membership from
/// the bus (`ChannelMembership`: who hears a channel's metadata); publishes `MetadataChanged` and
/// `UserMetadataSubscriptionChanged` (when someone listens). In a cluster
/// it asks `OpenMetadataRelay` before a new listener's snapshot and answers
/// `DeliverRelayedMetadata`, the other nodes' changes. Its `run()` removes items whose lease ran
/// out.
public actor Storage: OpeningModule {
    public nonisolated let name = "storage"
    /// Where the metadata lives.
    public nonisolated let store: any MetadataStore
    /// How often `run()` looks for items whose time to live ran out.
    public nonisolated let leaseSweepInterval: Duration

    struct Running {
        let context: ModuleContext
        /// Who is in which channel with which features (the `.metadata` listeners).
        let members: ChannelMembership
        /// Values are sealed before they are stored (a storage key is configured).
        let sealing: Bool
    }

    private enum State {
        case idle
        case started(ModuleContext, ChannelMembership)
        case running(Running)
        case failed(StorageStartupError)
    }
    private var state = State.idle
    var audience = StorageAudience()
    /// Writes, conflicts and commit times, for `StorageStatistics`.
    var tally = StorageTally()

    /// Creates the module over `store`.
    public init(store: any MetadataStore = InMemoryMetadataStore(), leaseSweepInterval: Duration = .seconds(1)) {
        self.store = store
        self.leaseSweepInterval = leaseSweepInterval
    }

    public func start(_ context: ModuleContext) async {
        // Only the members that hear metadata: the others are nothing to this module.
        let members = ChannelMembership(keeping: .metadata)
        state = .started(context, members)
        context.bus.subscription().keepingMembership(members) { [self] update in await membershipChanged(update) }
            .on(SessionTakenOver.self) { [self] event in await takenOver(event) }
        let bus = context.bus
        registerWrite(SetChannelMetadata.self, on: bus)
        registerWrite(UpdateChannelMetadata.self, on: bus)
        registerWrite(RemoveChannelMetadata.self, on: bus)
        registerWrite(SetUserMetadata.self, on: bus)
        registerWrite(UpdateUserMetadata.self, on: bus)
        registerWrite(RemoveUserMetadata.self, on: bus)
        bus.handle(GetChannelMetadata.self) { [self] request throws(RtmError) in try await get(request) }
        bus.handle(GetUserMetadata.self) { [self] request throws(RtmError) in try await get(request) }
        bus.handle(SubscribeUserMetadata.self) { [self] request throws(RtmError) in try await subscribe(request) }
        bus.handle(UnsubscribeUserMetadata.self) { [self] request throws(RtmError) in try await unsubscribe(request) }
        bus.handle(StorageStatistics.self) { [self] _ in await tally.counts }
        bus.handle(DeliverRelayedMetadata.self) { [self] request in
            await relayed(request)
            return Done()
        }
    }

    /// Opens the store and checks that its values can be read with the storage key in force
    /// (or with none). Throws `StorageStartupError`, naming the file.
    public func open() async throws {
        guard case .started(let context, let members) = state else {
            if case .failed(let error) = state { throw error }
            throw StorageStartupError("storage: open() before start(), or twice")
        }
        do {
            try await store.open()
            let sealing = context.bus.hasHandler(SealAtRest.self)
            try await checkSealing(sealing, bus: context.bus)
            state = .running(Running(context: context, members: members, sealing: sealing))
            context.log(.info, "metadata in \(store.location)\(sealing ? ", sealed at rest" : "")")
        } catch {
            state = .failed(error)
            await store.close()
            throw error
        }
    }

    /// Removes items whose lease ran out, every `leaseSweepInterval`, until cancelled; then
    /// closes the store.
    public func run() async throws {
        guard let clock = context?.clock else { return }
        for await _ in clock.ticks(every: leaseSweepInterval) { await sweepLeases() }
        await store.close()
    }

    private var context: ModuleContext? {
        switch state {
        case .started(let context, _): context
        case .running(let running): running.context
        case .idle, .failed: nil
        }
    }

    func running(_ operation: String) throws(RtmError) -> Running {
        guard case .running(let running) = state else {
            throw RtmError(.storageNotAvailable, operation: operation, reason: "the metadata store is not open")
        }
        return running
    }

    // MARK: Registration

    private nonisolated func registerWrite<R: ChannelMetadataWrite>(_ type: R.Type, on bus: EventBus) {
        bus.handle(type) { [self] request throws(RtmError) in try await write(request) }
    }

    private nonisolated func registerWrite<R: UserMetadataWrite>(_ type: R.Type, on bus: EventBus) {
        bus.handle(type) { [self] request throws(RtmError) in try await write(request) }
    }

    // MARK: Opening

    private func checkSealing(_ sealing: Bool, bus: EventBus) async throws(StorageStartupError) {
        let file = store.location
        do {
            switch (sealing, try await store.sealingMarker()) {
            case (false, nil):
                return
            case (false, _?):
                throw StorageStartupError(
                    "metadata database \(file): its values are sealed at rest; start with the storage key that sealed them (--storage-key-file)")
            case (true, nil):
                guard try await !store.hasItems() else {
                    throw StorageStartupError(
                        "metadata database \(file): its values are not sealed at rest; it cannot be opened with a storage key")
                }
                let sealed = try await bus.request(
                    SealAtRest(plaintexts: [AtRestBinding.markerPlaintext], associatedData: [AtRestBinding.markerAssociatedData]))
                try await store.setSealingMarker(sealed.first ?? [])
            case (true, let marker?):
                let opened = try? await bus.request(
                    OpenAtRest(sealed: [marker], associatedData: [AtRestBinding.markerAssociatedData]))
                guard opened == [AtRestBinding.markerPlaintext] else {
                    throw StorageStartupError("metadata database \(file): the storage key is not the one its values were sealed with")
                }
            }
        } catch let error as StorageStartupError {
            throw error
        } catch {
            throw StorageStartupError("metadata database \(file): \(error)")
        }
    }
}
