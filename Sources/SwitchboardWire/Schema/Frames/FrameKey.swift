/// Every map key the Switchboard frames use.
enum FrameKey: String, CaseIterable, Sendable {
    // Every frame.
    case t, id, result, code, operation, reason, detail
    // Session.
    case appId, userId, token, heartbeatInterval, presenceTimeout, resumeSession, resumeSecret, resumeReceived
    case session, resumed, lostMessages, lostChannels, secondsLeft
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

    /// The keys with their UTF-8 bytes, so a key on the wire is matched without building a String.
    static let table: [(key: FrameKey, utf8: [UInt8])] = allCases.map { ($0, Array($0.rawValue.utf8)) }

    /// The keys ordered by byte length, then first byte, then last byte, as one flat list; and for
    /// each length and first byte the range of that list to compare with, so matching a key on the
    /// wire looks at a handful of candidates, however many features add keys.
    private static let sorted: [(key: FrameKey, utf8: [UInt8])] = table.sorted {
        ($0.utf8.count, $0.utf8[0], $0.utf8.last!) < ($1.utf8.count, $1.utf8[0], $1.utf8.last!)
    }
    private static let longest = table.map(\.utf8.count).max() ?? 0
    private static let candidates: [Range<Int>] = {
        var ranges = Array(repeating: 0..<0, count: (longest + 1) * 256)
        for (index, entry) in sorted.enumerated() {
            let slot = entry.utf8.count * 256 + Int(entry.utf8[0])
            ranges[slot] = ranges[slot].isEmpty ? index..<(index + 1) : ranges[slot].lowerBound..<(index + 1)
        }
        return ranges
    }()

    /// The key whose UTF-8 bytes are `bytes`, if any.
    static func match<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> FrameKey? {
        if let found = bytes.withContiguousStorageIfAvailable(match(contiguous:)) { return found }
        return Array(bytes).withUnsafeBufferPointer(match(contiguous:))
    }

    private static func match(contiguous bytes: UnsafeBufferPointer<UInt8>) -> FrameKey? {
        let count = bytes.count
        guard count > 0, count <= longest else { return nil }
        for index in candidates[count * 256 + Int(bytes[0])] {
            let entry = sorted[index]
            if entry.utf8.withUnsafeBufferPointer({ $0.elementsEqual(bytes) }) { return entry.key }
        }
        return nil
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
        guard String(validating: bytes[range], as: UTF8.self) != nil else {
            throw WireError(.invalidUTF8, offset: range.lowerBound - bytes.startIndex)
        }
        return nil
    }
}
