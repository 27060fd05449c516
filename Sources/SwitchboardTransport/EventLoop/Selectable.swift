/// Something registered with an event loop's epoll instance; called on the loop thread only.
protocol Selectable: AnyObject {
    /// The fd became ready; `events` is the epoll event mask.
    func handleEvents(_ events: UInt32)
    /// The loop is shutting down: release the descriptor.
    func loopShuttingDown()
}

/// Something with outbound bytes queued from any thread, flushed on its loop thread.
protocol LoopFlushable: AnyObject, Sendable {
    /// Moves queued output to the socket; runs on the loop thread.
    func flushOnLoop()
}
