import SwitchboardCore

/// Issues the completion-block calls of one client one after another, in the order they were
/// made, so `publish(a) { … }` followed by `publish(b) { … }` reaches the server as a, then b.
typealias CallQueue = SerialJobs
