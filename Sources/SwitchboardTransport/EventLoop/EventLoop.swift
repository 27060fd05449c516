import CLinux
import Dispatch
import Foundation
import Glibc
import Synchronization

/// One thread running `epoll_wait`; every socket registered with it is read, written and closed
/// on that thread, and work from other threads reaches it through `execute`.
public final class EventLoop: Sendable {
    private struct Inbox {
        var tasks: [@Sendable () -> Void] = []
        var flushes: [any LoopFlushable] = []
        var wakePending = false
        var stopRequested = false
        var closed = false
    }

    /// State touched only by the loop thread.
    final class Local: @unchecked Sendable {
        // Sendable proof: the only path to an instance is `EventLoop.local`, which checks
        // `inEventLoop` with a precondition, so all access is on the one loop thread.
        var registrations: [Int32: (generation: UInt32, handler: any Selectable)] = [:]
        var nextGeneration: UInt32 = 1
        var timers = LoopTimers()
        var tasks: [@Sendable () -> Void] = []
        var flushes: [any LoopFlushable] = []
        /// Other loops this one queued work for during the current pass; woken once, before it
        /// waits for events again.
        var wakesDue: [EventLoop] = []
        let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        let iovecs = UnsafeMutableBufferPointer<iovec>.allocate(capacity: 64)
        deinit {
            readBuffer.deallocate()
            iovecs.deallocate()
        }
    }

    /// A short name for logs and thread names.
    public let name: String
    /// The bytes this loop's sockets received and sent.
    public let traffic = LoopTraffic()
    let epollFD: Int32
    private let wakeFD: Int32
    private let inbox = Mutex(Inbox())
    /// Whether the wakeup descriptor is closed: a wake deferred to the end of another loop's pass
    /// must not write to the number, which may belong to another socket by then. Its own lock,
    /// held across the write, and not the inbox's: the woken loop takes its inbox at once, and
    /// finding it held by the waker's system call made it wait in the kernel on every wake.
    private let wakeClosed = Mutex(false)
    private let thread = Atomic<UInt>(0)
    private let wakeups = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)
    private let localState = Local()

    /// The loop-thread state; only on the loop thread.
    var local: Local {
        precondition(inEventLoop, "event loop state used off its thread")
        return localState
    }

    init(name: String) throws(SocketError) {
        self.name = name
        let epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw SocketError("epoll_create1") }
        let wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wakeFD >= 0 else {
            Glibc.close(epollFD)
            throw SocketError("eventfd")
        }
        self.epollFD = epollFD
        self.wakeFD = wakeFD
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = UInt64(UInt32(bitPattern: wakeFD))
        epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event)
    }

    /// True when called on this loop's thread.
    public var inEventLoop: Bool {
        let id = thread.load(ordering: .acquiring)
        return id != 0 && pthread_equal(pthread_self(), pthread_t(id)) != 0
    }

    /// Stops the process when not called on this loop's thread: the check before every access
    /// to a value only this loop's thread may touch.
    func checkConfined() {
        precondition(inEventLoop, "loop-confined value used off its loop")
    }

    /// The loop whose thread is calling, if any.
    private static var current: EventLoop? {
        pthread_getspecific(currentKey).map { Unmanaged<EventLoop>.fromOpaque($0).takeUnretainedValue() }
    }

    private static let currentKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Runs `task` on the loop thread, after the events currently being handled. A task
    /// submitted after the loop has shut down is dropped.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        submit(task)
    }

    /// Like `execute`, but returns false (dropping `task`) when the loop has shut down.
    @discardableResult
    func submit(_ task: @escaping @Sendable () -> Void) -> Bool {
        let onLoop = inEventLoop
        let (accepted, mustWake) = inbox.withLock { inbox -> (Bool, Bool) in
            guard !inbox.closed else { return (false, false) }
            inbox.tasks.append(task)
            guard !onLoop && !inbox.wakePending else { return (true, false) }
            inbox.wakePending = true
            return (true, true)
        }
        if mustWake { wakeSoon() }
        return accepted
    }

    /// Queues `target` to be flushed on the loop thread; wakes the loop at most once per batch.
    func scheduleFlush(_ target: any LoopFlushable) {
        let onLoop = inEventLoop
        let mustWake = inbox.withLock { inbox -> Bool in
            guard !inbox.closed else { return false }
            inbox.flushes.append(target)
            guard !onLoop && !inbox.wakePending else { return false }
            inbox.wakePending = true
            return true
        }
        if mustWake { wakeSoon() }
    }

    /// Wakes this loop now or, when called on another loop's thread, once that loop has handled
    /// the events of its current pass: everything that pass queues here goes out in one batch,
    /// with one wakeup (and each connection's frames in one write).
    ///
    /// A loop is listed once per pass: when it drains its inbox while this pass still queues
    /// work, the later work re-arms `wakePending`, and the one wakeup at the pass's end covers it.
    private func wakeSoon() {
        guard let caller = Self.current, caller !== self else { return wake() }
        let due = caller.local
        guard !due.wakesDue.contains(where: { $0 === self }) else { return }
        due.wakesDue.append(self)
    }

    /// Wakes the loops this pass queued work for.
    private func wakeDue() {
        let state = local
        guard !state.wakesDue.isEmpty else { return }
        for loop in state.wakesDue { loop.wake() }
        state.wakesDue.removeAll(keepingCapacity: true)
    }

    /// Runs `action` on the loop thread after `delay`; returns an id for `cancelTimer`. Loop only.
    @discardableResult
    func schedule(after delay: Duration, _ action: @escaping () -> Void) -> UInt64 {
        local.timers.schedule(after: delay, action)
    }

    /// Cancels a timer from `schedule(after:)`. Loop only.
    func cancelTimer(_ id: UInt64) {
        local.timers.cancel(id)
    }

    /// How many times another thread had to wake the loop (one eventfd write each).
    var wakeupCount: Int { wakeups.load(ordering: .relaxed) }

    private func wake() {
        wakeups.add(1, ordering: .relaxed)
        // Written under `wakeClosed`'s lock, which `tearDown` holds to close the descriptor.
        wakeClosed.withLock { closed in
            guard !closed else { return }
            var one: UInt64 = 1
            _ = Glibc.write(wakeFD, &one, 8)
        }
    }

    // MARK: Registration (loop thread only)

    /// Adds `fd` to epoll with `events`, dispatching readiness to `handler`.
    func register(_ fd: Int32, events: UInt32, handler: any Selectable) throws(SocketError) {
        let state = local
        let generation = state.nextGeneration
        state.nextGeneration &+= 1
        var event = epoll_event()
        event.events = events
        event.data.u64 = UInt64(generation) << 32 | UInt64(UInt32(bitPattern: fd))
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 else { throw SocketError("epoll_ctl add") }
        state.registrations[fd] = (generation, handler)
    }

    /// Changes the events watched for `fd`.
    func reregister(_ fd: Int32, events: UInt32) {
        guard let entry = local.registrations[fd] else { return }
        var event = epoll_event()
        event.events = events
        event.data.u64 = UInt64(entry.generation) << 32 | UInt64(UInt32(bitPattern: fd))
        epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event)
    }

    /// Removes `fd` from epoll (the caller closes it).
    func deregister(_ fd: Int32) {
        guard local.registrations.removeValue(forKey: fd) != nil else { return }
        epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
    }

    /// The loop's shared scratch buffer for reads. Loop only.
    var readBuffer: UnsafeMutableRawBufferPointer { local.readBuffer }

    // MARK: Running

    func start() {
        Thread { [self] in self.run() }.start()
    }

    /// Asks the loop to finish and waits until its thread has exited. Not on the loop thread.
    func shutdownAndWait() {
        precondition(!inEventLoop, "an event loop cannot shut itself down synchronously")
        let mustWake = inbox.withLock { inbox -> Bool in
            if inbox.stopRequested { return false }
            inbox.stopRequested = true
            return true
        }
        if mustWake { wake() }
        finished.wait()
        finished.signal()
    }

    private func run() {
        thread.store(UInt(pthread_self()), ordering: .releasing)
        // The system's thread name (`top -H`, `perf`): at most 15 bytes, so the loop's number stays.
        _ = switchboard_name_thread(name.replacingOccurrences(of: "switchboard-", with: "sb-"))
        pthread_setspecific(Self.currentKey, Unmanaged.passUnretained(self).toOpaque())
        let capacity: Int32 = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Int(capacity))
        defer { events.deallocate() }
        while true {
            let stop = runQueued()
            wakeDue()
            if stop { break }
            let busy = inbox.withLock { !$0.tasks.isEmpty || !$0.flushes.isEmpty }
            let timeout = busy ? 0 : local.timers.timeoutMilliseconds()
            let count = epoll_wait(epollFD, events, capacity, timeout)
            if count < 0 {
                if errno == EINTR { continue }
                fatalError("epoll_wait failed: errno \(errno)")
            }
            for i in 0..<Int(count) {
                let event = events[i]
                let fd = Int32(bitPattern: UInt32(truncatingIfNeeded: event.data.u64))
                let generation = UInt32(truncatingIfNeeded: event.data.u64 >> 32)
                if fd == wakeFD && generation == 0 {
                    var value: UInt64 = 0
                    _ = Glibc.read(wakeFD, &value, 8)
                    continue
                }
                guard let entry = local.registrations[fd], entry.generation == generation else {
                    continue
                }
                entry.handler.handleEvents(event.events)
            }
            for action in local.timers.due() { action() }
        }
        tearDown()
        wakeDue()
        finished.signal()
    }

    /// Runs queued tasks and flushes; returns true when the loop should stop.
    private func runQueued() -> Bool {
        let state = local
        let stop = inbox.withLock { inbox -> Bool in
            swap(&inbox.tasks, &state.tasks)
            swap(&inbox.flushes, &state.flushes)
            inbox.wakePending = false
            return inbox.stopRequested
        }
        for task in state.tasks { task() }
        state.tasks.removeAll(keepingCapacity: true)
        for target in state.flushes { target.flushOnLoop() }
        state.flushes.removeAll(keepingCapacity: true)
        return stop
    }

    private func tearDown() {
        // From here on nothing new is accepted. Sockets close themselves (telling their owners),
        // and tasks already queued still run; repeat until both are gone.
        inbox.withLock { $0.closed = true }
        for _ in 0..<64 {
            let handlers = local.registrations.values.map(\.handler)
            for handler in handlers { handler.loopShuttingDown() }
            _ = runQueued()
            let idle = inbox.withLock { $0.tasks.isEmpty && $0.flushes.isEmpty }
            if idle && local.registrations.isEmpty { break }
        }
        for (fd, _) in local.registrations {
            epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
            Glibc.close(fd)
        }
        local.registrations.removeAll()
        local.timers.removeAll()
        wakeClosed.withLock { closed in
            closed = true
            Glibc.close(wakeFD)
        }
        Glibc.close(epollFD)
    }
}
