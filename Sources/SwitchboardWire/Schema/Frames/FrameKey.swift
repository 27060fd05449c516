/// Every map key the Switchboard frames use.
enum FrameKey: String, CaseIterable, Sendable {
    // Every frame.
    case t, id, result, code, operation, reason, detail
    // A request's trace: the request id the client chose for logs.
    case trace
    // Session.
    case appId, userId, token, heartbeatInterval, presenceTimeout, resumeSession, resumeSecret, resumeReceived
    case session, resumed, lostMessages, lostChannels, historyLost, secondsLeft
    // Message and user channels.
    case channel, features, channelType, message, customType, topic, publisher, timestamp
    // Storage.
    case majorRevision, items, key, value, revision, updateTs, authorUserId, recordTs, recordUserId, lock, ttl, sessionLease, expiresAt, sessionBound, storageType, target
    // Extension operations and pushes.
    case body
    // Stream channels and topics.
    case qos, priority, meta, syncWithMedia, sendTs, users, succeedUsers, failedUsers, eventType, topicInfos, publishers
    // Presence (with eventType, users and items above).
    case states, snapshot, joinUserList, leaveUserList, timeoutUserList, userStateList, totalOccupancy, firstOrLast, more, includeUserId, includeState, page, nextPage, keys, userIds, online, lastSeen, channels
    // Lock.
    case lockName, retry, acquired, fencingToken, locks, owner

    /// Every key by its spelling, made once.
    private static let matcher = NameMatcher(FrameKey.allCases.map { (value: $0, name: $0.rawValue) })

    /// The key whose UTF-8 bytes are `bytes`, if any.
    static func match<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> FrameKey? {
        // Through the global in place: a copy of the matcher would count references to its arrays.
        if let found = bytes.withContiguousStorageIfAvailable({ Self.matcher.match($0) }) { return found }
        return Array(bytes).withUnsafeBufferPointer { Self.matcher.match($0) }
    }
}

extension MessagePackOutput {
    /// Writes a frame key.
    mutating func writeKey(_ key: FrameKey) { writeString(key.rawValue) }
}

extension MessagePackReader {
    /// Reads a map key: the known key it names, or nil for a key this version does not know.
    mutating func readFrameKey() throws(WireError) -> FrameKey? {
        let start = offset
        guard try peekType() == .string else { throw WireError(.nonStringKey, offset: start) }
        let range = try readStringRange()
        if let key = FrameKey.match(bytes[range]) { return key }
        guard UTF8Text.string(bytes[range]) != nil else {
            throw WireError(.invalidUTF8, offset: range.lowerBound - bytes.startIndex)
        }
        return nil
    }
}
