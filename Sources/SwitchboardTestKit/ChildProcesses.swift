import Foundation
import Glibc
import Synchronization

/// Starts the tests' child processes one at a time, and keeps their ends from disturbing the
/// rest of the test process.
///
/// Foundation's `Process.run` closes the parent's ends of its pipes with `try!`, which traps when
/// `close` is interrupted by a signal (`EINTR`); with many tests starting and stopping processes
/// at once, a `SIGCHLD` from another child could land there. So every test starts its processes
/// here: one start at a time, and, once the runtime has installed its `SIGCHLD` handler (at the
/// first start), that handler restarts interrupted calls (`SA_RESTART`) and is not called when a
/// child only stops or continues (`SA_NOCLDSTOP`: a paused redis-server).
public enum ChildProcesses {
    private static let starting = Mutex(false)

    /// Starts `process` (`Process.run`), after any other start under way.
    public static func start(_ process: Process) throws {
        try starting.withLock { handlerAdjusted in
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
