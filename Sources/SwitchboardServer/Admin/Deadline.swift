/// Waiting for an answer that may not come: what the admin listener asks (a readiness check, a
/// module's statistics) must not hold a probe or a scrape forever.
enum Deadline {
    /// `body`'s answer, or nil when it takes longer than `timeout` (or the task is cancelled).
    static func answer<T: Sendable>(within timeout: Duration, _ body: @escaping @Sendable () async -> T) async -> T? {
        await withTaskGroup(of: T?.self) { group in
            group.addTask { await body() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
