import SwitchboardCore
import SwitchboardWire

/// Which login of each user is the newest across the nodes, as far as this node knows: the claims
/// of this node's sessions (`ClaimUser`) and those other nodes announce on the user's channel.
///
/// Every login claims a generation of its user from Redis (its clock, and at least one more than
/// the user's last), so of two logins the later claim has the larger number wherever it is heard. A node ends its session of a user when it
/// hears another node's larger claim. A claim heard while one of this node's own is still on its
/// way to Redis (the answer and the announcement travel on two connections, in either order) is
/// weighed once the own claim's number is known. A pure value; the link keeps it under a lock.
struct UserClaims: Sendable {
    private struct Claim {
        var generation: Int64
        var caller: Caller
    }

    /// The claim of this node's session of each user.
    private var held: [UserKey: Claim] = [:]
    /// Claims of this node still waiting for their number, by user.
    private var pending: [UserKey: Int] = [:]
    /// The largest claim heard from another node while one of this node's was pending, by user.
    private var heardMeanwhile: [UserKey: Int64] = [:]

    /// A claim of `user` by this node is on its way.
    mutating func begin(_ user: UserKey) {
        pending[user, default: 0] += 1
    }

    /// This node's claim for `caller` got `generation` (nil: it failed). Returns the session of
    /// this node that must end now: the claimant itself, when another node claimed later while it
    /// was on its way.
    mutating func finish(_ caller: Caller, generation: Int64?) -> Caller? {
        let user = caller.user
        if let count = pending[user], count > 1 { pending[user] = count - 1 } else { pending[user] = nil }
        if let generation, generation > held[user]?.generation ?? 0 {
            held[user] = Claim(generation: generation, caller: caller)
        }
        guard pending[user] == nil, let heard = heardMeanwhile.removeValue(forKey: user) else { return nil }
        return replaced(user, by: heard)
    }

    /// Another node claimed `user` with `generation`. Returns this node's session of the user that
    /// this claim replaces, if any.
    mutating func heard(_ user: UserKey, generation: Int64) -> Caller? {
        guard pending[user] == nil else {
            heardMeanwhile[user] = max(heardMeanwhile[user] ?? 0, generation)
            return nil
        }
        return replaced(user, by: generation)
    }

    /// `session` of `user` ended here: its claim goes.
    mutating func ended(_ session: SessionID, of user: UserKey) {
        if held[user]?.caller.session == session { held[user] = nil }
    }

    private mutating func replaced(_ user: UserKey, by generation: Int64) -> Caller? {
        guard let claim = held[user], claim.generation < generation else { return nil }
        held[user] = nil
        return claim.caller
    }
}

/// What a node announces on a user's channel when one of its sessions claims the user: written by
/// the claim script (Redis's `cmsgpack`), `["claim", node, app, user, generation]` in MessagePack.
struct UserClaimAnnouncement: Sendable, Hashable {
    /// The node whose session claimed the user.
    var origin: String
    var user: UserKey
    var generation: Int64

    /// Reads an announcement; nil when `bytes` are not one (a relayed message, say).
    init?(decoding bytes: [UInt8]) {
        var reader = MessagePackReader(bytes)
        guard (try? reader.readArrayHeader()) == 5, (try? reader.readString()) == "claim",
            let origin = try? reader.readString(), let app = try? reader.readString(), let userId = try? reader.readString(),
            let generation = try? reader.readInteger(Int64.self), reader.isAtEnd
        else { return nil }
        self.origin = origin
        self.user = UserKey(app, userId)
        self.generation = generation
    }
}
