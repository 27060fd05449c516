import Glibc

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

    /// What `match` looks keys up in, made once.
    private struct Matcher {
        /// Every key's bytes, one after another, ordered by byte length, then first byte, then
        /// last byte.
        let bytes: [UInt8]
        /// In that order: each key and where its bytes are in `bytes`.
        let entries: [(key: FrameKey, start: Int, count: Int)]
        /// For each length and first byte (`length * 256 + byte`), the range of `entries` to
        /// compare with: a handful of candidates, however many features add keys.
        let candidates: [Range<Int>]
        let longest: Int

        init() {
            let keys: [(key: FrameKey, utf8: [UInt8])] = FrameKey.allCases.map { ($0, Array($0.rawValue.utf8)) }
            let sorted = keys.sorted {
                ($0.utf8.count, $0.utf8[0], $0.utf8.last!) < ($1.utf8.count, $1.utf8[0], $1.utf8.last!)
            }
            var bytes: [UInt8] = []
            var entries: [(key: FrameKey, start: Int, count: Int)] = []
            for (key, utf8) in sorted {
                entries.append((key, bytes.count, utf8.count))
                bytes += utf8
            }
            longest = sorted.map(\.utf8.count).max() ?? 0
            var ranges = Array(repeating: 0..<0, count: (longest + 1) * 256)
            for (index, entry) in sorted.enumerated() {
                let slot = entry.utf8.count * 256 + Int(entry.utf8[0])
                ranges[slot] = ranges[slot].isEmpty ? index..<(index + 1) : ranges[slot].lowerBound..<(index + 1)
            }
            self.bytes = bytes
            self.entries = entries
            self.candidates = ranges
        }

        func match(_ wire: UnsafeBufferPointer<UInt8>) -> FrameKey? {
            let count = wire.count
            guard count > 0, count <= longest, let wireStart = wire.baseAddress else { return nil }
            return bytes.withUnsafeBufferPointer { known in
                for index in candidates[count * 256 + Int(wire[0])] {
                    let entry = entries[index]
                    if memcmp(known.baseAddress! + entry.start, wireStart, count) == 0 { return entry.key }
                }
                return nil
            }
        }
    }

    private static let matcher = Matcher()

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
        guard String(validating: bytes[range], as: UTF8.self) != nil else {
            throw WireError(.invalidUTF8, offset: range.lowerBound - bytes.startIndex)
        }
        return nil
    }
}
