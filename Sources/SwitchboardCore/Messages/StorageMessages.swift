/// Options of a metadata write (`RtmMetadataOptions`): what the server records with each item.
public struct MetadataOptions: Sendable, Hashable {
    /// Record the time of the edit in each written item's `updateTs`.
    public var recordTs: Bool
    /// Record the editor's user id in each written item's `authorUserId`.
    public var recordUserId: Bool
    /// With a lock named, the fencing token of the writer's acquisition (beyond the reference):
    /// the write is refused when the lock has been acquired again since.
    public var fencingToken: UInt64?
    /// Creates options; the reference's defaults record nothing.
    public init(recordTs: Bool = false, recordUserId: Bool = false, fencingToken: UInt64? = nil) {
        self.recordTs = recordTs
        self.recordUserId = recordUserId
        self.fencingToken = fencingToken
    }
}

/// How long a written item lives, beyond the reference (which keeps every item until removed).
public enum MetadataLease: Sendable, Hashable {
    /// The item is removed this many milliseconds after the write.
    case timeToLive(milliseconds: UInt64)
    /// The item is removed when the writer's session ends.
    case session
}

/// One metadata item (`RtmMetadataItem`).
public struct MetadataItem: Sendable, Hashable {
    /// The key, unique within its set.
    public var key: String
    /// The value (ignored by removals).
    public var value: String
    /// In a write: -1 for no check, or the revision the stored item must have. In a read: the
    /// item's revision.
    public var revision: Int64
    /// Server time of the last write, milliseconds since 1970, if it recorded it; else 0.
    public var updateTs: UInt64
    /// The user who last wrote it, if the write recorded it; else empty.
    public var authorUserId: String
    /// In a write: the lease asked for, if any. Reads report leases as `expiresAt`/`sessionBound`.
    public var lease: MetadataLease?
    /// In a read: when a time-to-live item goes, milliseconds since 1970.
    public var expiresAt: UInt64?
    /// In a read: whether the item goes when its writer's session ends.
    public var sessionBound: Bool

    /// Creates an item; the defaults are those of a write with no check and no lease.
    public init(
        key: String, value: String = "", revision: Int64 = -1, updateTs: UInt64 = 0, authorUserId: String = "",
        lease: MetadataLease? = nil, expiresAt: UInt64? = nil, sessionBound: Bool = false
    ) {
        self.key = key
        self.value = value
        self.revision = revision
        self.updateTs = updateTs
        self.authorUserId = authorUserId
        self.lease = lease
        self.expiresAt = expiresAt
        self.sessionBound = sessionBound
    }
}

/// A set of metadata items (`RtmMetadata`): a channel's or a user's.
public struct Metadata: Sendable, Hashable {
    /// In a write: -1 for no check, or the revision the stored set must have. In a read: the
    /// set's revision (0 when there is no set).
    public var majorRevision: Int64
    /// The items, in the order their keys were first set.
    public var items: [MetadataItem]
    /// Creates a set.
    public init(majorRevision: Int64 = -1, items: [MetadataItem] = []) {
        self.majorRevision = majorRevision
        self.items = items
    }

    /// Bytes counted against the resume buffer.
    public var approximateSize: Int {
        items.reduce(16) { $0 + $1.key.utf8.count + $1.value.utf8.count + $1.authorUserId.utf8.count + 40 }
    }
}

/// Whose metadata a request or event is about: a channel's (per app, type and name) or a user's.
public enum MetadataTarget: Sendable, Hashable, CustomStringConvertible {
    /// The metadata of a message or stream channel.
    case channel(ChannelKey)
    /// The metadata of a user.
    case user(UserKey)

    /// The app the metadata belongs to.
    public var app: AppID {
        switch self {
        case .channel(let channel): channel.app
        case .user(let user): user.app
        }
    }

    public var description: String {
        switch self {
        case .channel(let channel): "channel \(channel)"
        case .user(let user): "user \(user)"
        }
    }
}

/// What a metadata write does to the stored set.
public enum MetadataWriteKind: Sendable, Hashable, CaseIterable {
    /// Adds items or overwrites their values (`setChannelMetadata`, `setUserMetadata`).
    case set
    /// Overwrites the values of items that exist (`updateChannelMetadata`, `updateUserMetadata`).
    case update
    /// Removes items, or the whole set when none are named (`remove…Metadata`).
    case remove

    /// The reference's operation name for a write of this kind on channel metadata.
    public var channelOperation: String {
        switch self {
        case .set: SetChannelMetadata.operation
        case .update: UpdateChannelMetadata.operation
        case .remove: RemoveChannelMetadata.operation
        }
    }

    /// The reference's operation name for a write of this kind on user metadata.
    public var userOperation: String {
        switch self {
        case .set: SetUserMetadata.operation
        case .update: UpdateUserMetadata.operation
        case .remove: RemoveUserMetadata.operation
        }
    }
}

/// A write to a channel's metadata: set, update or remove, each its own request type.
public protocol ChannelMetadataWrite: BusRequest where Response == Done {
    /// What the write does.
    static var kind: MetadataWriteKind { get }
    /// Who writes.
    var caller: Caller { get }
    /// `.message` or `.stream`.
    var channelType: RtmChannelType { get }
    /// The channel.
    var channelName: String { get }
    /// The items and the set's expected revision.
    var data: Metadata { get }
    /// What to record with the items.
    var options: MetadataOptions { get }
    /// The lock the caller must hold for the write to go ahead; nil or empty for none.
    var lockName: String? { get }
    /// Creates the write.
    init(
        caller: Caller, channelType: RtmChannelType, channelName: String, data: Metadata, options: MetadataOptions,
        lockName: String?)
}

/// A write to a user's metadata: set, update or remove, each its own request type.
public protocol UserMetadataWrite: BusRequest where Response == Done {
    /// What the write does.
    static var kind: MetadataWriteKind { get }
    /// Who writes.
    var caller: Caller { get }
    /// The user whose metadata it is (any user of the caller's app).
    var userId: UserID { get }
    /// The items and the set's expected revision.
    var data: Metadata { get }
    /// What to record with the items.
    var options: MetadataOptions { get }
    /// Creates the write.
    init(caller: Caller, userId: UserID, data: Metadata, options: MetadataOptions)
}

/// What a metadata write does, as a type: each of set, update and remove has a request type of
/// its own on the bus (`SetChannelMetadata`, `UpdateUserMetadata` …), built from one generic write.
public protocol MetadataWriteAction: Sendable {
    /// What the write does.
    static var kind: MetadataWriteKind { get }
    /// The reference's operation name on channel metadata.
    static var channelOperation: String { get }
    /// The reference's operation name on user metadata.
    static var userOperation: String { get }
}

/// Adds items or overwrites their values.
public enum SetMetadataItems: MetadataWriteAction {
    public static let kind = MetadataWriteKind.set
    public static let channelOperation = OperationName.Storage.setChannelMetadata.rawValue
    public static let userOperation = OperationName.Storage.setUserMetadata.rawValue
}

/// Overwrites the values of items that exist.
public enum UpdateMetadataItems: MetadataWriteAction {
    public static let kind = MetadataWriteKind.update
    public static let channelOperation = OperationName.Storage.updateChannelMetadata.rawValue
    public static let userOperation = OperationName.Storage.updateUserMetadata.rawValue
}

/// Removes items, or the whole set when `data.items` is empty.
public enum RemoveMetadataItems: MetadataWriteAction {
    public static let kind = MetadataWriteKind.remove
    public static let channelOperation = OperationName.Storage.removeChannelMetadata.rawValue
    public static let userOperation = OperationName.Storage.removeUserMetadata.rawValue
}

/// A write of `Action` to a channel's metadata.
public struct ChannelMetadataRequest<Action: MetadataWriteAction>: ChannelMetadataWrite {
    public typealias Response = Done
    public static var operation: String { Action.channelOperation }
    public static var kind: MetadataWriteKind { Action.kind }
    public var caller: Caller
    public var channelType: RtmChannelType
    public var channelName: String
    public var data: Metadata
    public var options: MetadataOptions
    public var lockName: String?
    /// Creates the write.
    public init(
        caller: Caller, channelType: RtmChannelType, channelName: String, data: Metadata = Metadata(),
        options: MetadataOptions = MetadataOptions(), lockName: String? = nil
    ) {
        self.caller = caller
        self.channelType = channelType
        self.channelName = channelName
        self.data = data
        self.options = options
        self.lockName = lockName
    }
}

/// A write of `Action` to a user's metadata.
public struct UserMetadataRequest<Action: MetadataWriteAction>: UserMetadataWrite {
    public typealias Response = Done
    public static var operation: String { Action.userOperation }
    public static var kind: MetadataWriteKind { Action.kind }
    public var caller: Caller
    public var userId: UserID
    public var data: Metadata
    public var options: MetadataOptions
    /// Creates the write.
    public init(caller: Caller, userId: UserID, data: Metadata = Metadata(), options: MetadataOptions = MetadataOptions()) {
        self.caller = caller
        self.userId = userId
        self.data = data
        self.options = options
    }
}

/// Sets channel metadata items: new keys are added, existing ones overwritten.
public typealias SetChannelMetadata = ChannelMetadataRequest<SetMetadataItems>
/// Updates channel metadata items that exist.
public typealias UpdateChannelMetadata = ChannelMetadataRequest<UpdateMetadataItems>
/// Removes channel metadata items, or the whole set when `data.items` is empty.
public typealias RemoveChannelMetadata = ChannelMetadataRequest<RemoveMetadataItems>
/// Sets user metadata items: new keys are added, existing ones overwritten.
public typealias SetUserMetadata = UserMetadataRequest<SetMetadataItems>
/// Updates user metadata items that exist.
public typealias UpdateUserMetadata = UserMetadataRequest<UpdateMetadataItems>
/// Removes user metadata items, or the whole set when `data.items` is empty.
public typealias RemoveUserMetadata = UserMetadataRequest<RemoveMetadataItems>

/// The metadata of a channel of the caller's app (an empty set with revision 0 when it has none).
public struct GetChannelMetadata: BusRequest {
    public typealias Response = Metadata
    public static let operation = OperationName.Storage.getChannelMetadata.rawValue
    public var caller: Caller
    public var channelType: RtmChannelType
    public var channelName: String
    /// Creates the query.
    public init(caller: Caller, channelType: RtmChannelType, channelName: String) {
        self.caller = caller
        self.channelType = channelType
        self.channelName = channelName
    }
}

/// The metadata of a user of the caller's app (an empty set with revision 0 when it has none).
public struct GetUserMetadata: BusRequest {
    public typealias Response = Metadata
    public static let operation = OperationName.Storage.getUserMetadata.rawValue
    public var caller: Caller
    public var userId: UserID
    /// Creates the query.
    public init(caller: Caller, userId: UserID) {
        self.caller = caller
        self.userId = userId
    }
}

/// Subscribe the caller's session to a user's metadata: a snapshot now, the whole set after each change.
public struct SubscribeUserMetadata: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Storage.subscribeUserMetadata.rawValue
    public var caller: Caller
    public var userId: UserID
    /// Creates the request.
    public init(caller: Caller, userId: UserID) {
        self.caller = caller
        self.userId = userId
    }
}

/// Stop the caller's session hearing about a user's metadata.
public struct UnsubscribeUserMetadata: BusRequest {
    public typealias Response = Done
    public static let operation = OperationName.Storage.unsubscribeUserMetadata.rawValue
    public var caller: Caller
    public var userId: UserID
    /// Creates the request.
    public init(caller: Caller, userId: UserID) {
        self.caller = caller
        self.userId = userId
    }
}

/// Metadata changed: a write, an expired lease or an ended session's items (published only
/// when someone subscribes to it).
public struct MetadataChanged: BusEvent, Hashable {
    /// Whose metadata.
    public var target: MetadataTarget
    /// The user whose write it was; empty when a lease ran out.
    public var author: UserID
    /// The revision the change got; the set's `majorRevision` unless the set is gone.
    public var revision: Int64
    /// How many items the set has now.
    public var itemCount: Int
    /// Creates the event.
    public init(target: MetadataTarget, author: UserID, revision: Int64, itemCount: Int) {
        self.target = target
        self.author = author
        self.revision = revision
        self.itemCount = itemCount
    }
}

/// A session started or stopped hearing a user's metadata: it subscribed, unsubscribed, or
/// ended (published only when someone subscribes to it: the cluster link, which listens for the
/// user's metadata on other nodes while anyone here does).
public struct UserMetadataSubscriptionChanged: BusEvent, Hashable {
    /// The subscriber.
    public var session: SessionID
    /// Whose metadata.
    public var user: UserKey
    /// True when the session now hears it, false when it no longer does.
    public var subscribed: Bool
    /// Creates the event.
    public init(session: SessionID, user: UserKey, subscribed: Bool) {
        self.session = session
        self.user = user
        self.subscribed = subscribed
    }
}

/// A storage event as its receivers get it (`RtmStorageEvent`), always with the whole set.
public struct StorageEvent: Sendable, Hashable {
    /// `.message` or `.stream` for channel metadata; `.user` for user metadata.
    public var channelType: RtmChannelType
    /// Channel or user metadata.
    public var storageType: RtmStorageType
    /// `.snapshot` on subscribe or join, `.update` after a change.
    public var eventType: RtmStorageEventType
    /// The channel name or the user id.
    public var target: String
    /// The whole set as it is now.
    public var data: Metadata
    /// Server time of the event, milliseconds since 1970.
    public var timestamp: UInt64

    /// Creates an event.
    public init(
        channelType: RtmChannelType, storageType: RtmStorageType, eventType: RtmStorageEventType, target: String,
        data: Metadata, timestamp: UInt64
    ) {
        self.channelType = channelType
        self.storageType = storageType
        self.eventType = eventType
        self.target = target
        self.data = data
        self.timestamp = timestamp
    }

    /// Bytes counted against the resume buffer.
    public var approximateSize: Int { data.approximateSize + target.utf8.count + 32 }
}

/// What the storage module has written since it started: for the server's metrics, read when
/// asked, never on a write's path.
public struct StorageStatistics: BusRequest {
    public typealias Response = StorageCounts
    public static let operation = OperationName.Server.storageStatistics.rawValue
    /// Creates the query.
    public init() {}
}

/// Metadata writes, counted since the module started.
public struct StorageCounts: Sendable, Hashable {
    /// Writes committed, by kind (set, update, remove), channel and user metadata together.
    public var writes: [MetadataWriteKind: UInt64]
    /// Writes refused because a revision they named was not the stored one
    /// (`storageOutdatedRevision`).
    public var revisionConflicts: UInt64
    /// How long the store took to commit each write, refused ones included.
    public var commitLatency: DurationHistogram.Snapshot
    /// Creates counts.
    public init(
        writes: [MetadataWriteKind: UInt64] = [:], revisionConflicts: UInt64 = 0,
        commitLatency: DurationHistogram.Snapshot = DurationHistogram.Snapshot()
    ) {
        self.writes = writes
        self.revisionConflicts = revisionConflicts
        self.commitLatency = commitLatency
    }
}
