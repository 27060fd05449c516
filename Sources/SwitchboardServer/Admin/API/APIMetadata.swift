import SwitchboardCore

/// Channel and user metadata, through the storage module as clients' calls go: the same
/// revisions and compare-and-set (`majorRevision`, each item's `revision`; a stale one is 409),
/// the same limits. Items may carry `ttlMs`; session-bound items are for clients only.
extension APIMethod {
    static let metadata = [
        APIMethod("getChannelMetadata", getChannel), APIMethod("setChannelMetadata", writeChannel(SetChannelMetadata.self)),
        APIMethod("removeChannelMetadata", writeChannel(RemoveChannelMetadata.self)),
        APIMethod("getUserMetadata", getUser), APIMethod("setUserMetadata", writeUser(SetUserMetadata.self)),
        APIMethod("removeUserMetadata", writeUser(RemoveUserMetadata.self)),
    ]

    /// The most items one write names (the storage module's own limit is lower, with its code).
    private static let itemLimit = 10_000

    private static func getChannel(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params)
        let channel = try params.channel()
        try params.finish()
        return json(try await api.request(GetChannelMetadata(caller: caller, channelType: channel.type, channelName: channel.name)))
    }

    private static func getUser(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params)
        let userId = try params.string("userId")
        try params.finish()
        return json(try await api.request(GetUserMetadata(caller: caller, userId: userId)))
    }

    private static func writeChannel<R: ChannelMetadataWrite>(_ type: R.Type) -> Run {
        { params, api throws(APIFailure) in
            let caller = try api.caller(&params, from: true)
            let channel = try params.channel()
            let (data, options) = try params.metadataWrite(R.kind)
            try params.finish()
            _ = try await api.request(
                R(caller: caller, channelType: channel.type, channelName: channel.name, data: data, options: options, lockName: nil))
            return .object([])
        }
    }

    private static func writeUser<R: UserMetadataWrite>(_ type: R.Type) -> Run {
        { params, api throws(APIFailure) in
            let caller = try api.caller(&params, from: true)
            let userId = try params.string("userId")
            let (data, options) = try params.metadataWrite(R.kind)
            try params.finish()
            _ = try await api.request(R(caller: caller, userId: userId, data: data, options: options))
            return .object([])
        }
    }

    /// A stored set: `{"majorRevision": …, "items": [{key, value, revision, updateTs, authorUserId, sessionBound[, expiresAt]}]}`.
    private static func json(_ metadata: Metadata) -> JSONValue {
        .object([
            ("majorRevision", .int(metadata.majorRevision)),
            ("items", .array(metadata.items.map { item in
                var members: [(String, JSONValue)] = [
                    ("key", .string(item.key)), ("value", .string(item.value)), ("revision", .int(item.revision)),
                    ("updateTs", .int(item.updateTs)), ("authorUserId", .string(item.authorUserId)), ("sessionBound", .bool(item.sessionBound)),
                ]
                if let expiresAt = item.expiresAt { members.append(("expiresAt", .int(expiresAt))) }
                return .object(members)
            })),
        ])
    }
}

extension APIParameters {
    /// A write's items (`items`: key, value unless removing, `revision`, `ttlMs`), the set's
    /// `majorRevision` and what to record (`recordTs`, `recordUserId`).
    mutating func metadataWrite(_ kind: MetadataWriteKind) throws(APIFailure) -> (Metadata, MetadataOptions) {
        let major = try integer("majorRevision", in: -1...Int64.max, default: -1)
        var items: [MetadataItem] = []
        for var item in try objects("items", limit: 10_000) {
            var parsed = MetadataItem(key: try item.string("key"))
            if kind != .remove {
                parsed.value = try item.string("value")
                if let ttl = try item.optionalInteger("ttlMs", in: 1...Int64.max) { parsed.lease = .timeToLive(milliseconds: UInt64(ttl)) }
            }
            parsed.revision = try item.integer("revision", in: -1...Int64.max, default: -1)
            try item.finish()
            items.append(parsed)
        }
        let options = MetadataOptions(recordTs: try bool("recordTs", default: false), recordUserId: try bool("recordUserId", default: false))
        return (Metadata(majorRevision: major, items: items), options)
    }

}
