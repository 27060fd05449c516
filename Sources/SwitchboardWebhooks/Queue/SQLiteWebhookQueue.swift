import Foundation
import SwitchboardCore
import SwitchboardSQLite

/// The webhook queue in an SQLite file (`webhooks.sqlite` under the data directory): write-ahead
/// logging with `synchronous=FULL`, like the metadata store, on a `DatabaseThread` of its own.
/// A delivery is sent only once its row is on disk, so a crash (even `kill -9`) loses none.
public final class SQLiteWebhookQueue: WebhookQueue {
    /// The database file.
    public let path: String
    private let thread = DatabaseThread(name: "switchboard-webhooks", subject: "the webhook queue")

    /// Each step takes the file from version `index` to `index + 1`.
    static let migrations: [String] = [
        // 1: one row per event and receiver, in queue order.
        """
        CREATE TABLE deliveries (
            sequence INTEGER PRIMARY KEY, event_id TEXT NOT NULL, target TEXT NOT NULL,
            body BLOB NOT NULL, created INTEGER NOT NULL);
        """
    ]

    /// The queue in the file `path` (created if missing, with its directory).
    public init(path: String) { self.path = path }

    /// The queue in `webhooks.sqlite` under `directory`.
    public convenience init(directory: String) {
        self.init(path: URL(fileURLWithPath: directory).appendingPathComponent("webhooks.sqlite").path)
    }

    public func open() async throws(WebhookQueueFailure) -> [QueuedDelivery] {
        let path = path
        // Everything that touches the disk, creating the directory included, runs on the queue's thread.
        try await thread.start(alreadyStarted: WebhookQueueFailure("webhook queue \(path) was already opened")) {
            VersionedDatabase.open(path: path, migrations: Self.migrations)
                .mapError { WebhookQueueFailure("webhook queue \(path): \($0.reason)") }
        }
        do {
            return try await thread.perform(writes: false, operation: "webhooks") { connection in
                var waiting: [QueuedDelivery] = []
                try connection.query("SELECT sequence, event_id, target, body, created FROM deliveries ORDER BY sequence") { row in
                    waiting.append(
                        QueuedDelivery(
                            sequence: row.integer(0), eventId: row.text(1), target: row.text(2), body: row.blob(3),
                            created: WallClockTime(millisecondsSince1970: UInt64(max(0, row.integer(4))))))
                }
                return waiting
            }
        } catch {
            throw WebhookQueueFailure("webhook queue \(path): cannot read it: \(error.reason)")
        }
    }

    public func write(adding deliveries: [QueuedDelivery], removing removed: [Int64]) async throws(RtmError) {
        try await thread.perform(writes: true, operation: "webhooks") { connection in
            for delivery in deliveries {
                try connection.run(
                    "INSERT INTO deliveries (sequence, event_id, target, body, created) VALUES (?, ?, ?, ?, ?)",
                    [
                        .integer(delivery.sequence), .text(delivery.eventId), .text(delivery.target), .blob(delivery.body),
                        .integer(Int64(delivery.created.millisecondsSince1970)),
                    ])
            }
            for sequence in removed {
                try connection.run("DELETE FROM deliveries WHERE sequence = ?", [.integer(sequence)])
            }
        }
    }

    public func close() async { await thread.stop() }
}
