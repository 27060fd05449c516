import Dispatch

/// A counting semaphore usable from synchronous code to wait for a loop to finish a task.
struct Semaphore: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    func signal() { semaphore.signal() }
    func wait() { semaphore.wait() }
}
