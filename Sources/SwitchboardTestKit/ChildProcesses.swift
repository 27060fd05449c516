import Foundation
import Glibc
import Synchronization
import CLinux

/// Starts the tests' child processes one at a time, and keeps their ends from disturbing the
/// rest of the test process.
///
/// Foundation's `Process.run` closes the parent's ends of its pipes with `try!`, which traps when
/// `close` is interrupted by a signal (`EINTR`); with many tests starting and stopping processes
/// at once, a `SIGCHLD` from another child could land there. So every test starts its processes
/// here: one start at a time, with `SIGCHLD` blocked on the starting thread while it starts (the
/// signal goes to another thread; the child, which inherits the mask, starts nothing that needs
/// it), and, once the runtime has installed its `SIGCHLD` handler (at the first start), that
/// handler restarts interrupted calls (`SA_RESTART`) and is not called when a child only stops or
/// continues (`SA_NOCLDSTOP`: a paused redis-server).
public enum ChildProcesses {
    private static let starting = Mutex(false)

    /// Starts `process` (`Process.run`), after any other start under way.
    public static func start(_ process: Process) throws {
        try starting.withLock { handlerAdjusted in
            var childSignal = sigset_t()
            var previous = sigset_t()
            sigemptyset(&childSignal)
            sigaddset(&childSignal, SIGCHLD)
            pthread_sigmask(SIG_BLOCK, &childSignal, &previous)
            defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
            try process.run()
            if !handlerAdjusted {
                var action = sigaction()
                if sigaction(SIGCHLD, nil, &action) == 0 {
                    action.sa_flags |= SA_RESTART | SA_NOCLDSTOP
                    _ = sigaction(SIGCHLD, &action, nil)
                }
                handlerAdjusted = true
            }
        }
    }
}

extension ChildProcesses {
    /// Runs `program` with `arguments` to its end, or kills it after `timeout`; returns its exit
    /// status (128 + the signal when one ended it) and everything it wrote to standard output and
    /// error. Blocks: call it inside `BlockingWork.run`.
    ///
    /// Started with `posix_spawn` directly, not `Process`: the toolchain's `Process.run` lists
    /// `/proc/self/fd` by copying whole `dirent` records, which reads past the end of the
    /// directory buffer and crashes now and then in a process with many descriptors open (a test
    /// run); upstream Foundation fixed it later.
    public static func runCaptured(_ program: String, _ arguments: [String], timeout: Duration) throws -> (status: Int32, text: String) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        // Not inherited by other children (ours close every descriptor above 2 anyway).
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var pid: pid_t = 0
        let spawned: Int32 = withCStrings([program] + arguments) { argv in
            switchboard_spawn_captured(&pid, program, argv, ends[1])
        }
        close(ends[1])
        guard spawned == 0 else {
            close(ends[0])
            throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO)
        }
        let reading = ends[0]
        let child = pid
        // Stops the program at the deadline, from a thread of its own. The child is reaped only
        // under this lock, and killed only while not reaped, so its pid cannot have been reused.
        let reaped = Mutex(false)
        let deadline = ContinuousClock.now + timeout
        let watcher = Thread {
            while ContinuousClock.now < deadline {
                if reaped.withLock({ $0 }) { return }
                Thread.sleep(forTimeInterval: 0.05)
            }
            reaped.withLock { if !$0 { _ = Glibc.kill(child, SIGKILL) } }
        }
        watcher.start()
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(reading, $0.baseAddress, $0.count) }
            if count > 0 {
                output.append(contentsOf: buffer[..<count])
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        close(reading)
        var status: Int32 = 0
        while true {
            let found = reaped.withLock { done -> pid_t in
                let found = waitpid(child, &status, WNOHANG)
                if found == child { done = true }
                return found
            }
            if found == child || (found < 0 && errno != EINTR) { break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (code, String(decoding: output, as: UTF8.self))
    }

    /// Calls `body` with `strings` as a NULL-terminated array of C strings.
    private static func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> T) -> T {
        let copies = strings.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        return (copies + [nil]).withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
