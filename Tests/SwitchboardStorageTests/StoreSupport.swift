import Foundation
import Testing
import SwitchboardCore
@testable import SwitchboardStorage

/// The two built-in stores, so one suite runs against both.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory, sqlite

    var testDescription: String { rawValue }

    /// A new, opened, empty store of this kind (SQLite in a fresh temporary directory).
    func makeStore() async throws -> any MetadataStore {
        let store: any MetadataStore =
            switch self {
            case .memory: InMemoryMetadataStore()
            case .sqlite: SQLiteMetadataStore(directory: TemporaryDirectory.make())
            }
        try await store.open()
        return store
    }
}

/// Fresh directories under the system's temporary directory.
enum TemporaryDirectory {
    static func make() -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("switchboard-storage-\(UUID())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }
}

/// Short ways to build writes in tests.
extension MetadataWrite {
    static func set(_ pairs: [(String, String)], major: Int64 = -1, revisions: [String: Int64] = [:], author: String = "")
        -> MetadataWrite
    {
        make(.set, pairs, major: major, revisions: revisions, author: author)
    }

    static func update(_ pairs: [(String, String)], major: Int64 = -1, revisions: [String: Int64] = [:]) -> MetadataWrite {
        make(.update, pairs, major: major, revisions: revisions, author: "")
    }

    static func remove(_ keys: [String], major: Int64 = -1, revisions: [String: Int64] = [:]) -> MetadataWrite {
        make(.remove, keys.map { ($0, "") }, major: major, revisions: revisions, author: "")
    }

    private static func make(
        _ kind: MetadataWriteKind, _ pairs: [(String, String)], major: Int64, revisions: [String: Int64], author: String
    ) -> MetadataWrite {
        MetadataWrite(
            kind: kind, operation: "test", expectedMajorRevision: major,
            items: pairs.map { key, value in
                Item(key: key, value: Array(value.utf8), size: value.utf8.count, expectedRevision: revisions[key] ?? -1)
            },
            updateTs: 0, author: author)
    }
}

extension StoredSet {
    /// The values as strings, in order.
    var values: [String: String] {
        Dictionary(uniqueKeysWithValues: items.map { ($0.key, String(decoding: $0.value, as: UTF8.self)) })
    }
}

/// Runs `body` and returns the code of the `RtmError` it threw, nil if it did not throw.
func errorCode(_ body: () async throws -> Void) async -> RtmErrorCode? {
    do {
        try await body()
        return nil
    } catch let error as RtmError {
        return error.code
    } catch {
        Issue.record("not an RtmError: \(error)")
        return nil
    }
}
