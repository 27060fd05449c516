import Foundation
import SwitchboardTestKit
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

extension RawClient {
    /// Sends a storage request and waits for its answer.
    func storage(_ id: UInt32, _ operation: StorageOperation, timeout: Duration = Patience.standard) async -> ServerFrame? {
        send(.storage(id: id, operation))
        return await answer(to: id, timeout: timeout)
    }

    /// The storage events received so far, in order.
    var storageEvents: [StorageEvent] { received.compactMap(\.storageEvent) }

    /// Waits until `count` storage events have arrived; returns them.
    func storageEvents(count: Int) async -> [StorageEvent] {
        await waitFor { client in client.storageEvents.count >= count ? client.storageEvents : nil } ?? storageEvents
    }
}

extension StorageOperation {
    /// `setChannelMetadata` of `pairs` on message channel `channel`.
    static func setChannel(_ channel: String, _ pairs: [(String, String)], major: Int64 = -1, lock: String? = nil) -> Self {
        .writeChannel(
            .set, channelType: .message, channel: channel,
            data: Metadata(majorRevision: major, items: pairs.map { MetadataItem(key: $0.0, value: $0.1) }),
            options: MetadataOptions(recordTs: true, recordUserId: true), lock: lock)
    }

    /// `setUserMetadata` of `pairs` on `userId`.
    static func setUser(_ userId: String, _ pairs: [(String, String)]) -> Self {
        .writeUser(
            .set, userId: userId, data: Metadata(items: pairs.map { MetadataItem(key: $0.0, value: $0.1) }),
            options: MetadataOptions())
    }
}

extension Metadata {
    /// Key → value.
    var values: [String: String] { Dictionary(uniqueKeysWithValues: items.map { ($0.key, $0.value) }) }
}

/// A fresh directory under the system's temporary directory.
func temporaryDataDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("switchboard-test-\(UUID())")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
