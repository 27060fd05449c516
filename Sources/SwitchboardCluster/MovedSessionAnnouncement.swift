import SwitchboardCore
import SwitchboardWire

/// `["moved", former node, app, user, session, taking node]`, published on the user's channel
/// when a node takes a session over: the former node, if alive, ends its copy
/// (`EndMovedSession`).
struct MovedSessionAnnouncement: Sendable, Hashable {
    /// The node that held the session.
    var former: String
    /// The session.
    var caller: Caller
    /// The node that holds it now.
    var taker: String

    init(former: String, caller: Caller, taker: String) {
        self.former = former
        self.caller = caller
        self.taker = taker
    }

    /// Reads an announcement; nil when `bytes` are not one.
    init?(decoding bytes: [UInt8]) {
        var reader = MessagePackReader(bytes)
        guard (try? reader.readArrayHeader()) == 6, (try? reader.readString()) == "moved",
            let former = try? reader.readString(), let app = try? reader.readString(), let userId = try? reader.readString(),
            let session = try? reader.readInteger(UInt64.self), let taker = try? reader.readString(), reader.isAtEnd
        else { return nil }
        self.init(former: former, caller: Caller(app: app, userId: userId, session: SessionID(session)), taker: taker)
    }

    func encoded() -> [UInt8] {
        var writer = MessagePackWriter(reservingCapacity: 64)
        writer.writeArrayHeader(6)
        writer.writeString("moved")
        writer.writeString(former)
        writer.writeString(caller.app)
        writer.writeString(caller.userId)
        writer.writeUInt(caller.session.rawValue)
        writer.writeString(taker)
        return writer.bytes
    }
}
