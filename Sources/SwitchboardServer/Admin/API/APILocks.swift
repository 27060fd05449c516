import SwitchboardCore

/// Locks: list a channel's (`getLocks`) and take one from its owner (`revokeLock`), through the
/// lock module, which lets the server do both without being a member of the channel.
extension APIMethod {
    static let locks = [APIMethod("getLocks", getLocks), APIMethod("revokeLock", revokeLock)]

    /// `{"locks": [{lockName, owner, ttl, fencingToken}]}`, sorted by name.
    private static func getLocks(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params)
        let channel = try params.channel()
        try params.finish()
        let locks = try await api.request(GetLocks(caller: caller, channel: channel))
        return .object([
            ("locks", .array(locks.map { lock in
                .object([
                    ("lockName", .string(lock.lockName)), ("owner", .string(lock.owner)), ("ttl", .int(lock.ttl)),
                    ("fencingToken", .int(lock.fencingToken)),
                ])
            })),
        ])
    }

    /// Takes `lockName` from `userId`, who holds it now; the next in line gets it.
    private static func revokeLock(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params)
        let channel = try params.channel()
        let lockName = try params.string("lockName")
        let userId = try params.string("userId")
        try params.finish()
        _ = try await api.request(RevokeLock(caller: caller, lock: LockAddress(channel, lockName), userId: userId))
        return .object([])
    }
}
