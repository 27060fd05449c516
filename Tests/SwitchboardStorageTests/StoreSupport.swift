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
