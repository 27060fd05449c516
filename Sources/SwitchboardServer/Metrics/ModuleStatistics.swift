import SwitchboardCore

/// What the modules count of their own state, asked on the bus when `/metrics` is read (never on
/// a message's path): presence's channels and members, storage's writes, conflicts and commit
/// times, the lock module's locks and waiters, the webhooks' queue and deliveries. A module the server does not run (no handler), or
/// one that does not answer within `timeout`, leaves its families out of that scrape.
struct ModuleStatistics: Sendable {
    var presence: [RtmChannelType: MembershipCount]?
    var storage: StorageCounts?
    var locks: LockCounts?
    var webhooks: WebhookCounts?

    /// How long one module may take to answer a scrape.
    static let timeout: Duration = .seconds(2)

    /// Asks every module that counts something, all at once.
    static func gather(from bus: EventBus) async -> ModuleStatistics {
        async let presence = ask(bus, PresenceStatistics())
        async let storage = ask(bus, StorageStatistics())
        async let locks = ask(bus, LockStatistics())
        async let webhooks = ask(bus, WebhookStatistics())
        return ModuleStatistics(presence: await presence, storage: await storage, locks: await locks, webhooks: await webhooks)
    }

    private static func ask<R: BusRequest>(_ bus: EventBus, _ request: R) async -> R.Response? {
        guard bus.hasHandler(R.self) else { return nil }
        return await Deadline.answer(within: timeout) { try? await bus.request(request) } ?? nil
    }
}
