import Testing
import SwitchboardCore
import SwitchboardStorage

/// Short ways to build writes in tests.
extension MetadataWrite {
    /// A `set` of `pairs`, with the revisions to check and the author to record.
    public static func set(_ pairs: [(String, String)], major: Int64 = -1, revisions: [String: Int64] = [:], author: String = "")
        -> MetadataWrite
    {
        make(.set, pairs, major: major, revisions: revisions, author: author)
    }

    /// An `update` of `pairs`.
    public static func update(_ pairs: [(String, String)], major: Int64 = -1, revisions: [String: Int64] = [:]) -> MetadataWrite {
        make(.update, pairs, major: major, revisions: revisions, author: "")
    }

    /// A `remove` of `keys` (of the whole set when empty).
    public static func remove(_ keys: [String], major: Int64 = -1, revisions: [String: Int64] = [:]) -> MetadataWrite {
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
    /// The values as strings, by key.
    public var values: [String: String] {
        Dictionary(uniqueKeysWithValues: items.map { ($0.key, String(decoding: $0.value, as: UTF8.self)) })
    }
}

/// Runs `body` and returns the code of the `RtmError` it threw, nil if it did not throw.
public func errorCode(_ body: () async throws -> Void) async -> RtmErrorCode? {
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
