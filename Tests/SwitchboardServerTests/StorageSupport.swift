import Foundation
import Synchronization
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

/// Writer `writer` (user `writer-N`, logged in to `url`) sets its own metadata `a` and `b` to
/// `start + 1`, `start + 2` … one write after the other, until a write gets no answer (the server
/// was killed); returns the last value a write of which was answered.
func writeUntilCut(_ writer: Int, from start: Int, to url: String, group: EventLoopGroup, progress: AnsweredWrites) async -> Int {
    guard let client = try? await RawClient.connect(to: url, group: group) else { return start }
    _ = await client.login("writer-\(writer)")
    var last = start
    var id: UInt32 = 100
    while !Task.isCancelled && last < start + 10_000 {
        id += 1
        let next = last + 1
        client.send(.storage(id: id, .setUser("writer-\(writer)", [("a", "\(next)"), ("b", "\(next)")])))
        // The answer, or the end of the connection (SIGKILL) without one.
        let answer = await client.waitFor { client -> ServerFrame?? in
            if let answer = client.received.first(where: { $0.requestId == id }) { return .some(answer) }
            return client.closeCode != nil ? .some(nil) : nil
        }
        guard answer == .some(.some(.ok(id: id))) else { break }
        last = next
        progress.answered(writer)
    }
    client.connection.close()
    return last
}

/// How many writes each writer had answered, seen from the test while the writers run.
final class AnsweredWrites: Sendable {
    private let counts: Mutex<[Int]>

    init(_ writers: Int) { counts = Mutex(Array(repeating: 0, count: writers)) }

    func answered(_ writer: Int) { counts.withLock { $0[writer] += 1 } }

    var everyWriterAnswered: Bool { counts.withLock { !$0.contains(0) } }
}
