import SwitchboardCore

/// The lock feature's requests: set, remove, acquire, release, revoke, list. A lock is named by
/// its channel (message or stream) and its name.
public enum LockOperation: ClientOperationFamily {
    /// The channel it is about (for logs).
    public var channelName: String? {
        switch self {
        case .setLock(let lock, _), .removeLock(let lock), .acquireLock(let lock, _), .releaseLock(let lock), .revokeLock(let lock, _):
            lock.channel.name
        case .getLocks(let channel): channel.name
        }
    }

    /// Create a lock; `ttl` nil for the server's default.
    case setLock(LockAddress, ttl: Int?)
    /// Delete a lock.
    case removeLock(LockAddress)
    /// Take a lock; with `retry`, wait in line for it.
    case acquireLock(LockAddress, retry: Bool)
    /// Give a lock back, or stop waiting for it.
    case releaseLock(LockAddress)
    /// Take a lock from the user `userId`.
    case revokeLock(LockAddress, userId: String)
    /// List the locks of a channel.
    case getLocks(ChannelAddress)

    /// The reference operation it carries out, whose name is its `"t"`.
    public var reference: OperationName.Lock {
        switch self {
        case .setLock: .setLock
        case .removeLock: .removeLock
        case .acquireLock: .acquireLock
        case .releaseLock: .releaseLock
        case .revokeLock: .revokeLock
        case .getLocks: .getLocks
        }
    }

    public var name: String { Self.wireNames.name(of: reference) }

    /// Every lock operation but storage's `checkLockHolder`, which travels on the bus only.
    static let wireNames = WireOperationNames(OperationName.Lock.allCases.filter { $0 != .checkLockHolder })

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        guard let type = wireNames.operation(named: head.type) else { return nil }
        var channelType: RtmChannelType?
        var channel: String?
        var lockName: String?
        var ttl: Int?
        var retry = false
        var userId: String?
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .channelType: channelType = try reader.readChannelType(allowed: ChannelTypes.lockable)
            case .channel: channel = try reader.readString()
            case .lockName where type != .getLocks: lockName = try reader.readString()
            case .ttl where type == .setLock: ttl = try reader.readClampedCount()
            case .retry where type == .acquireLock: retry = try reader.readBool()
            case .userId where type == .revokeLock: userId = try reader.readString()
            default: return false
            }
            return true
        }
        let address = ChannelAddress(try head.required(channelType, .channelType), try head.required(channel, .channel))
        if type == .getLocks { return .getLocks(address) }
        let lock = LockAddress(address, try head.required(lockName, .lockName))
        switch type {
        case .setLock: return .setLock(lock, ttl: ttl)
        case .removeLock: return .removeLock(lock)
        case .acquireLock: return .acquireLock(lock, retry: retry)
        case .releaseLock: return .releaseLock(lock)
        default: return .revokeLock(lock, userId: try head.required(userId, .userId))
        }
    }

    func encodeFields(_ frame: inout FrameWriter) {
        switch self {
        case .setLock(let lock, let ttl):
            frame.lock(lock)
            if let ttl { frame.field(.ttl) { $0.writeCount(ttl) } }
        case .removeLock(let lock), .releaseLock(let lock):
            frame.lock(lock)
        case .acquireLock(let lock, let retry):
            frame.lock(lock)
            frame.field(.retry) { $0.writeBool(retry) }
        case .revokeLock(let lock, let userId):
            frame.lock(lock)
            frame.field(.userId) { $0.writeString(userId) }
        case .getLocks(let channel):
            frame.channel(channel)
        }
    }
}

extension FrameWriter {
    /// Writes `channelType`, `channel` and `lockName`.
    mutating func lock(_ lock: LockAddress) {
        channel(lock.channel)
        field(.lockName) { $0.writeString(lock.name) }
    }
}

/// The lock feature's answers that carry data: `{"t": "ok", "result": "<operation>", …}`.
public enum LockAnswer: AnswerFamily {
    /// What `acquireLock` achieved at once.
    case acquire(LockAcquisition)
    /// The locks `getLocks` found.
    case locks([LockDetail])

    var frameType: String { "ok" }

    func encodeFields(_ frame: inout FrameWriter) {
        switch self {
        case .acquire(let acquisition):
            frame.field(.result) { $0.writeString(LockOperation.wireNames.name(of: .acquireLock)) }
            switch acquisition {
            case .acquired(let token):
                frame.field(.acquired) { $0.writeBool(true) }
                frame.field(.fencingToken) { $0.writeUInt(token) }
            case .queued:
                frame.field(.acquired) { $0.writeBool(false) }
            }
        case .locks(let locks):
            frame.field(.result) { $0.writeString(LockOperation.wireNames.name(of: .getLocks)) }
            frame.field(.locks) { $0.writeLockDetails(locks) }
        }
    }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        guard head.type == "ok", let result = head.result.flatMap(LockOperation.wireNames.operation(named:)),
            result == .acquireLock || result == .getLocks
        else { return nil }
        var acquired: Bool?
        var token: UInt64?
        var locks: [LockDetail]?
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .acquired: acquired = try reader.readBool()
            case .fencingToken: token = try reader.readInteger(UInt64.self)
            case .locks: locks = try reader.readLockDetails()
            default: return false
            }
            return true
        }
        if result == .getLocks { return .locks(try head.required(locks, .locks)) }
        guard try head.required(acquired, .acquired) else { return .acquire(.queued) }
        return .acquire(.acquired(fencingToken: try head.required(token, .fencingToken)))
    }
}

extension LockPush: PushFamily {
    var frameType: String {
        switch self {
        case .event: "lockEvent"
        case .granted: "lockGranted"
        case .waitFailed: "lockWaitFailed"
        }
    }

    func encodeFrame() -> [UInt8] {
        var frame = FrameWriter(type: frameType, id: nil, capacity: approximateSize + 64)
        switch self {
        case .event(let event):
            frame.channel(event.channel)
            frame.field(.eventType) { $0.writeInt(Int64(event.eventType.rawValue)) }
            frame.field(.locks) { $0.writeLockDetails(event.locks) }
            frame.field(.timestamp) { $0.writeUInt(event.timestamp) }
        case .granted(let lock, let token):
            frame.lock(lock)
            frame.field(.fencingToken) { $0.writeUInt(token) }
        case .waitFailed(let lock, let code, let reason):
            frame.lock(lock)
            frame.field(.code) { $0.writeInt(Int64(code.rawValue)) }
            frame.field(.reason) { $0.writeString(reason) }
        }
        return frame.finish()
    }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        let type = head.type
        guard type == "lockEvent" || type == "lockGranted" || type == "lockWaitFailed" else { return nil }
        var channelType: RtmChannelType?
        var channel: String?
        var eventType: RtmLockEventType?
        var locks: [LockDetail]?
        var timestamp: UInt64?
        var lockName: String?
        var token: UInt64?
        var code: RtmErrorCode?
        var reason = ""
        try reader.readFields(head) { key, reader throws(WireError) in
            switch key {
            case .channelType: channelType = try reader.readChannelType(allowed: ChannelTypes.lockable)
            case .channel: channel = try reader.readString()
            case .eventType: eventType = try reader.readEnum(RtmLockEventType.self)
            case .locks: locks = try reader.readLockDetails()
            case .timestamp: timestamp = try reader.readInteger(UInt64.self)
            case .lockName: lockName = try reader.readString()
            case .fencingToken: token = try reader.readInteger(UInt64.self)
            case .code: code = try reader.readEnum(RtmErrorCode.self)
            case .reason: reason = try reader.readString()
            default: return false
            }
            return true
        }
        let address = ChannelAddress(try head.required(channelType, .channelType), try head.required(channel, .channel))
        if type == "lockEvent" {
            return .event(
                LockEventDelivery(
                    channel: address, eventType: try head.required(eventType, .eventType),
                    locks: try head.required(locks, .locks), timestamp: try head.required(timestamp, .timestamp)))
        }
        let lock = LockAddress(address, try head.required(lockName, .lockName))
        if type == "lockGranted" { return .granted(lock, fencingToken: try head.required(token, .fencingToken)) }
        return .waitFailed(lock, code: try head.required(code, .code), reason: reason)
    }
}

extension ChannelTypes {
    /// Where locks live: message and stream channels.
    static var lockable: ChannelTypes { ChannelTypes(.message, .stream) }
}

extension MessagePackWriter {
    /// Writes lock details as an array of `{lockName, owner, ttl, fencingToken}` maps.
    mutating func writeLockDetails(_ locks: [LockDetail]) {
        writeArrayHeader(locks.count)
        for lock in locks {
            writeMapHeader(4)
            writeKey(.lockName); writeString(lock.lockName)
            writeKey(.owner); writeString(lock.owner)
            writeKey(.ttl); writeCount(lock.ttl)
            writeKey(.fencingToken); writeUInt(lock.fencingToken)
        }
    }
}

extension MessagePackReader {
    /// Reads an array of lock detail maps; `owner` and `fencingToken` may be absent (free lock).
    mutating func readLockDetails() throws(WireError) -> [LockDetail] {
        let count = try readArrayHeader()
        var locks: [LockDetail] = []
        locks.reserveCapacity(min(count, 64))
        for _ in 0..<count {
            let start = offset
            let fields = try readMapHeader()
            var name: String?
            var owner = ""
            var ttl: Int?
            var token: UInt64 = 0
            for _ in 0..<fields {
                switch try readFrameKey() {
                case .lockName?: name = try readString()
                case .owner?: owner = try readString()
                case .ttl?: ttl = try readCount()
                case .fencingToken?: token = try readInteger(UInt64.self)
                default: try skipValue()
                }
            }
            guard let name, let ttl else {
                throw WireError(.invalidValue("a lock detail needs lockName and ttl"), offset: start)
            }
            locks.append(LockDetail(lockName: name, owner: owner, ttl: ttl, fencingToken: token))
        }
        return locks
    }
}

extension ClientFrame {
    /// A lock request.
    public static func lock(id: UInt32, _ operation: LockOperation) -> ClientFrame {
        ClientFrame(id: id, .lock(operation))
    }
}

extension ServerFrame {
    /// The lock push this frame carries, if it is one.
    public var lockPush: LockPush? {
        if case .push(.lock(let push)) = self { push } else { nil }
    }
    /// The lock answer this frame carries, if it is one.
    public var lockAnswer: LockAnswer? {
        if case .answer(_, .lock(let answer)) = self { answer } else { nil }
    }
}

extension LockOperation {
    /// The per-client call budget the operation draws on; nil when it draws on none.
    public var rateBudget: RateBudget? {
        switch self {
        case .acquireLock: .lockAcquire
        case .setLock, .removeLock, .releaseLock, .revokeLock, .getLocks: .other
        }
    }
}
