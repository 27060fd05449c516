import SwitchboardCore

/// Closes connections that have not logged in within `timeout` of opening, so sockets that never
/// log in (scanners, abandoned or hostile clients) do not hold server resources.
struct LoginDeadline: Sendable {
    /// The clock the countdown runs on.
    let clock: any SwitchboardClock
    /// The time allowed; nil for no deadline.
    let timeout: Duration?
    /// Where a closed connection is reported.
    let refusals: RefusalLog

    /// Starts the countdown for `link`; it stops when the link logs in or closes.
    func start(for link: ClientLink) {
        guard let timeout else { return }
        let deadline = clock.now + timeout
        let clock = clock
        let refusals = refusals
        let task = Task {
            do {
                try await clock.sleep(until: deadline)
            } catch {
                return
            }
            guard link.closeIfNeverLoggedIn(reason: "login timeout") else { return }
            refusals.refused(link.socket.remoteAddress, "no login within \(timeout)")
        }
        link.setLoginDeadline(task)
    }
}
