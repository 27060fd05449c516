import Foundation
import SwitchboardCore

/// One metadata item (`AgoraRtmMetadataItem`).
public final class RtmMetadataItem: NSObject {
    /// The key.
    public var key: String = ""
    /// The value.
    public var value: String = ""
    /// The user who last wrote it, when the write recorded it; read-only.
    public internal(set) var authorUserId: String = ""
    /// In a read: the item's revision. In a write: -1 (the default) for no check, or the revision
    /// the stored item must have for the write to go ahead.
    public var revision: Int64 = -1
    /// When it was last written, when the write recorded it (milliseconds since 1970); read-only.
    public internal(set) var updateTs: UInt64 = 0
    /// Switchboard extension: in a write, remove the item this many milliseconds later (0, the
    /// default: keep it until removed).
    public var timeToLive: UInt64 = 0
    /// Switchboard extension: in a write, remove the item when this client's session ends; in a
    /// read, whether the item goes when its writer's session ends.
    public var boundToSession: Bool = false
    /// Switchboard extension: when a time-to-live item goes (milliseconds since 1970); 0 if never.
    public internal(set) var expiresAt: UInt64 = 0
    /// Switchboard extension: in a read with client-side encryption on, the value did not open
    /// under this client's key (written with another key or mode, or without encryption), so
    /// `value` is the sealed text as stored. The other items of the set are opened as usual.
    public internal(set) var isSealed: Bool = false

    /// An empty item.
    public override init() {}

    /// An item with `key`, `value` and `revision` (-1: no check).
    public init(key: String, value: String, revision: Int64 = -1) {
        self.key = key
        self.value = value
        self.revision = revision
    }

    /// The item as the server sent it.
    init(_ item: MetadataItem) {
        key = item.key
        value = item.value
        authorUserId = item.authorUserId
        revision = item.revision
        updateTs = item.updateTs
        boundToSession = item.sessionBound
        expiresAt = item.expiresAt ?? 0
    }

    /// The item as a write sends it.
    var written: MetadataItem {
        let lease: MetadataLease? =
            boundToSession ? .session : timeToLive > 0 ? .timeToLive(milliseconds: timeToLive) : nil
        return MetadataItem(key: key, value: value, revision: revision, lease: lease)
    }
}

/// A set of metadata items (`AgoraRtmMetadata`).
public final class RtmMetadata: NSObject {
    /// In a read: the set's revision (0 when there is none). In a write: -1 (the default) for no
    /// check, or the revision the stored set must have.
    public var majorRevision: Int64 = -1
    /// The items.
    public var items: [RtmMetadataItem]?

    /// An empty set.
    public override init() {}

    /// The set as the server sent it; the items of `sealedKeys` did not open (`isSealed`).
    init(_ metadata: Metadata, sealedKeys: Set<String> = []) {
        majorRevision = metadata.majorRevision
        items = metadata.items.map { item in
            let read = RtmMetadataItem(item)
            read.isSealed = sealedKeys.contains(item.key)
            return read
        }
    }

    /// Switchboard extension: the keys of the items whose values did not open under this client's
    /// key (`RtmMetadataItem.isSealed`), in the set's order.
    public var sealedKeys: [String] { (items ?? []).filter(\.isSealed).map(\.key) }

    /// The set as a write sends it.
    var written: Metadata { Metadata(majorRevision: majorRevision, items: (items ?? []).map(\.written)) }
}

/// Options of a metadata write (`AgoraRtmMetadataOptions`).
public final class RtmMetadataOptions: NSObject {
    /// Record the time of the edit in each written item.
    public var recordTs: Bool = false
    /// Record the editor's user id in each written item.
    public var recordUserId: Bool = false
    /// With a lock named, the fencing token `acquireLock` gave (beyond the reference): the write is
    /// refused when the lock has been acquired again since. 0 sends none.
    public var fencingToken: UInt64 = 0

    /// The defaults: record nothing.
    public override init() {}

    /// Options recording what is asked.
    public init(recordTs: Bool, recordUserId: Bool) {
        self.recordTs = recordTs
        self.recordUserId = recordUserId
    }

    var written: MetadataOptions {
        MetadataOptions(recordTs: recordTs, recordUserId: recordUserId, fencingToken: fencingToken == 0 ? nil : fencingToken)
    }
}

/// The answer of `getChannelMetadata` and `getUserMetadata` (`AgoraRtmGetMetadataResponse`).
public final class RtmGetMetadataResponse: NSObject, Sendable {
    private let metadata: Metadata
    private let sealedKeys: Set<String>

    init(_ metadata: Metadata, sealedKeys: Set<String> = []) {
        self.metadata = metadata
        self.sealedKeys = sealedKeys
    }

    /// The metadata (a new object on each read, so the response can be shared across threads).
    public var data: RtmMetadata? { RtmMetadata(metadata, sealedKeys: sealedKeys) }
}

/// The completion block of a metadata read (`AgoraRtmGetMetadataBlock`).
public typealias RtmGetMetadataBlock = @Sendable (RtmGetMetadataResponse?, RtmErrorInfo?) -> Void

/// A storage event (`AgoraRtmStorageEvent`): a channel's or a user's whole metadata, as a
/// snapshot when subscribing or joining, or after a change.
public final class RtmStorageEvent: NSObject, Sendable {
    /// The channel type (`.user` for user metadata).
    public let channelType: RtmChannelType
    /// Channel or user metadata.
    public let storageType: RtmStorageType
    /// `.snapshot` or `.update`.
    public let eventType: RtmStorageEventType
    /// The channel name or the user id.
    public let target: String
    /// Server time of the event, milliseconds since 1970.
    public let timestamp: UInt64
    private let metadata: Metadata
    private let sealedKeys: Set<String>

    init(_ event: StorageEvent, sealedKeys: Set<String> = []) {
        channelType = event.channelType
        storageType = event.storageType
        eventType = event.eventType
        target = event.target
        timestamp = event.timestamp
        metadata = event.data
        self.sealedKeys = sealedKeys
    }

    /// The whole metadata (a new object on each read, so the event can be shared across threads).
    public var data: RtmMetadata { RtmMetadata(metadata, sealedKeys: sealedKeys) }
}
