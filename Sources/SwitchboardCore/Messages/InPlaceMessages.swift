/// A `Publish` read where the client's frame arrived: its channel name, message and custom type
/// are the frame's bytes, lent for the one call that answers it (`InPlaceRequest`). Nearly every
/// frame a busy server reads is a publish; read so, it is answered without a copy of its values.
public struct PublishInPlace: InPlaceRequest {
    /// Who publishes.
    public let caller: Caller
    /// The channel type, as the client sent it.
    public let channelType: RtmChannelType
    /// The channel name (for a user channel, the receiver's user id): valid UTF-8.
    public let channelName: UnsafeRawBufferPointer
    /// The message as sent: valid UTF-8 when `payloadIsString`, otherwise bytes.
    public let payload: UnsafeRawBufferPointer
    /// Whether the message was sent as a string.
    public let payloadIsString: Bool
    /// The custom type as valid UTF-8; empty for none.
    public let customType: UnsafeRawBufferPointer
    /// When the server read the frame, in milliseconds since 1970 by the server's clock: the
    /// message's timestamp (read once for the frames of one read from the socket).
    public let receivedAt: UInt64
    /// What the publisher's connection remembers of the receiver of its last user-channel
    /// publish, for the handler to read and fill (`ReceiverMemo`); nil for none.
    public let receiverMemo: UnsafeMutablePointer<ReceiverMemo>?

    /// Creates the request; every byte given must stay as it is until the call that answers it
    /// returns, and text must be valid UTF-8.
    public init(
        caller: Caller, channelType: RtmChannelType, channelName: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer,
        payloadIsString: Bool, customType: UnsafeRawBufferPointer, receivedAt: UInt64,
        receiverMemo: UnsafeMutablePointer<ReceiverMemo>? = nil
    ) {
        self.caller = caller
        self.channelType = channelType
        self.channelName = channelName
        self.payload = payload
        self.payloadIsString = payloadIsString
        self.customType = customType
        self.receivedAt = receivedAt
        self.receiverMemo = receiverMemo
    }

    /// The same publish owning copies of its values.
    public func owned() -> Publish {
        Publish(
            caller: caller, channelType: channelType, channelName: String(copyingUTF8: channelName),
            payload: MessagePayload(copying: payload, isString: payloadIsString), customType: String(copyingUTF8: customType))
    }
}

/// The receiver of a connection's last user-channel publish read in place, and its one session,
/// as they were while the user sessions were at `generation`: a connection publishing to one
/// user over and over finds the session without a lookup while nobody logs in or out. Only the
/// module answering `PublishInPlace` reads and fills it, on the connection's thread.
public struct ReceiverMemo {
    /// The user sessions' generation it was filled at (`UserSessions.generation`; 0: empty).
    public private(set) var generation: UInt64 = 0
    /// The receiver's user id, as UTF-8.
    private var receiver: [UInt8] = []
    /// The receiver's one session.
    public private(set) var session = SessionID(0)
    /// Where the outbox found that session's deliveries last (`Outbox.deliver(_:to:memo:)`).
    public var outbox = OutboxMemo()

    /// Nothing remembered.
    public init() {}

    /// The session remembered for the user `name` at `generation`; nil when it holds another
    /// user, or was filled at another generation.
    public func session(of name: UnsafeRawBufferPointer, at generation: UInt64) -> SessionID? {
        guard self.generation == generation, receiver.count == name.count else { return nil }
        return receiver.withUnsafeBytes { Self.same($0, name) } ? session : nil
    }

    /// Whether `left` and `right`, of one length, hold the same bytes: compared 8 at a time.
    private static func same(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Bool {
        guard let a = left.baseAddress, let b = right.baseAddress else { return left.count == right.count }
        var offset = 0
        while offset + 8 <= left.count {
            guard a.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == b.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            else { return false }
            offset += 8
        }
        while offset < left.count {
            guard a.load(fromByteOffset: offset, as: UInt8.self) == b.load(fromByteOffset: offset, as: UInt8.self) else { return false }
            offset += 1
        }
        return true
    }

    /// Remembers `session` as the one session of the user `name` at `generation`.
    public mutating func remember(_ session: SessionID, of name: UnsafeRawBufferPointer, at generation: UInt64) {
        if receiver.count == name.count {
            receiver.withUnsafeMutableBytes { $0.copyMemory(from: name) }
        } else {
            receiver = Array(name.bindMemory(to: UInt8.self))
        }
        self.session = session
        self.generation = generation
    }
}

/// What an outbox remembers for one publishing connection of where it found a session's
/// deliveries: its own reference, opaque to everyone else, and the outbox's generation when it
/// was found. The outbox trusts the reference only while its generation is the same (nothing
/// added or removed since); an empty memo (generation 0) is never trusted.
public struct OutboxMemo: Sendable {
    /// The session the reference is for.
    public var session = SessionID(0)
    /// The outbox's generation when it was filled (0: empty).
    public var generation: UInt64 = 0
    /// The outbox's own reference to where the session's deliveries go, as an address (0: none).
    public var reference: UInt = 0

    /// Nothing remembered.
    public init() {}
}

/// A message as its receivers get it, with its body and custom type in memory lent for one
/// call: what a publish read in place (`PublishInPlace`) hands the outbox, which encodes the push
/// straight from those bytes (`Outbox.deliver(_:to:)`).
public struct LentMessage {
    /// The channel type it was published on.
    public let channelType: RtmChannelType
    /// The channel name as receivers see it (for a user channel, the publisher's user id).
    public let channelName: String
    /// The body as sent: valid UTF-8 when `payloadIsString`, otherwise bytes.
    public let payload: UnsafeRawBufferPointer
    /// Whether the body was sent as a string.
    public let payloadIsString: Bool
    /// The publisher's user id.
    public let publisher: UserID
    /// The custom type as valid UTF-8; empty for none.
    public let customType: UnsafeRawBufferPointer
    /// Server time of publication, milliseconds since 1970.
    public let timestamp: UInt64

    /// Creates the message; the lent bytes must stay as they are until the call it is given to
    /// returns.
    public init(
        channelType: RtmChannelType, channelName: String, payload: UnsafeRawBufferPointer, payloadIsString: Bool,
        publisher: UserID, customType: UnsafeRawBufferPointer, timestamp: UInt64
    ) {
        self.channelType = channelType
        self.channelName = channelName
        self.payload = payload
        self.payloadIsString = payloadIsString
        self.publisher = publisher
        self.customType = customType
        self.timestamp = timestamp
    }

    /// Bytes counted against the resume buffer, as for the owned message.
    public var approximateSize: Int {
        MessageDelivery.approximateSize(
            payload: payload.count, channelName: channelName.utf8.count, channelTopic: 0, publisher: publisher.utf8.count,
            customType: customType.count)
    }

    /// The same message owning copies of its values.
    public func owned() -> MessageDelivery {
        MessageDelivery(
            channelType: channelType, channelName: channelName, payload: MessagePayload(copying: payload, isString: payloadIsString),
            publisher: publisher, customType: String(copyingUTF8: customType), timestamp: timestamp)
    }
}

extension MessagePayload {
    /// A copy of a body given as its bytes: a string when `isString` (the bytes valid UTF-8).
    public init(copying bytes: UnsafeRawBufferPointer, isString: Bool) {
        self = isString ? .string(String(copyingUTF8: bytes)) : .binary([UInt8](bytes))
    }
}

extension String {
    /// A copy of `utf8`, which is valid UTF-8 (checked where it was read).
    public init(copyingUTF8 utf8: UnsafeRawBufferPointer) {
        self.init(decoding: utf8, as: UTF8.self)
    }
}
