/// How long a test waits, in real time, for something that should happen.
///
/// 15 s, as the raw test client waits for an answer: on a busy two-core machine an answer can take
/// 5 s. Waiting longer costs nothing when the thing happens; a test that expects something not to
/// happen does not wait this long for it, but shows with a positive control that it could have.
public enum Patience {
    /// The default of every bounded wait of the tests.
    public static let standard: Duration = .seconds(15)
}

/// Polls `condition` every few milliseconds until it holds or `timeout` passes (real time);
/// returns whether it held.
public func eventually(within timeout: Duration = Patience.standard, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline, !Task.isCancelled else { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}

/// Like `eventually`, for a condition that suspends (a call to a server): asked again every few
/// milliseconds until it holds, a throw counting as "not yet".
public func eventuallyAsync(
    within timeout: Duration = Patience.standard, _ condition: @Sendable () async throws -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while (try? await condition()) != true {
        guard ContinuousClock.now < deadline, !Task.isCancelled else { return false }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return true
}
