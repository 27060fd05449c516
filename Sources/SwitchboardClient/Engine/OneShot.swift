import SwitchboardCore

/// A value delivered once and awaited once: bridges a resolver callback to `async`.
final class OneShot<Value: Sendable>: Sendable {
    private let state = Locked<(value: Value?, waiter: CheckedContinuation<Value, Never>?)>((nil, nil))

    /// Delivers the value; later calls are ignored.
    func fulfil(_ value: Value) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, Never>? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }

    /// The value, once delivered.
    var value: Value {
        get async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
                let ready = state.withLock { state -> Value? in
                    if let value = state.value { return value }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
