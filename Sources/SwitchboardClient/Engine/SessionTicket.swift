import SwitchboardCore
import SwitchboardWire

/// What the client holds of its session: the token it logs in with, the ticket that resumes the
/// session, and how many of the session's pushes it has received (a resume tells the server,
/// which sends again what came after).
struct SessionTicket: Sendable {
    /// The login token; replaced by `renewToken` only once the server accepts the new one.
    var token = ""
    private(set) var ticket: ResumeTicket?
    private(set) var receivedPushes: UInt64 = 0

    /// The ticket to resume with, counting the pushes received; nil for a new session.
    var resume: ResumeTicket? {
        guard var ticket else { return nil }
        ticket.received = receivedPushes
        return ticket
    }

    /// A login was answered: a new session starts counting from zero. Called in arrival order,
    /// before the first push of the new session.
    mutating func accept(_ accepted: LoginAccepted) {
        if !accepted.resumed { receivedPushes = 0 }
        ticket = accepted.ticket
    }

    /// A push of the session arrived.
    mutating func countPush() { receivedPushes += 1 }

    /// The session is over: the next login starts a new one.
    mutating func forget() { ticket = nil }
}
