import Foundation
import Testing
import SwitchboardCore
@testable import SwitchboardStorage
import SwitchboardStorageContract
import SwitchboardSQLite

/// What only the SQLite store has: a file that outlives the process, its schema versions, and
/// clear errors when the file cannot be used.
@Suite(.timeLimit(.minutes(2))) struct SQLiteStoreTests {
    let room = MetadataTarget.channel(ChannelKey(app: "app", .stream, "room"))
    let limits = Limits()

    func path() -> String { TemporaryDirectory.make() + "/metadata.sqlite" }

    func startupError(_ store: SQLiteMetadataStore) async -> String? {
        do {
            try await store.open()
            await store.close()
            return nil
        } catch {
            return error.message
        }
    }

    @Test func writesSurviveReopeningAndRevisionsGoOnGrowing() async throws {
        let file = path()
        let store = SQLiteMetadataStore(path: file)
        try await store.open()
        var write = MetadataWrite.set([("a", "ä 1"), ("b", "")], author: "alice")
        write.updateTs = 1_700_000_000_123
        write.items[0].expiresAt = 2_000_000_000_000
        let first = try await store.write(write, to: room, limits: limits)
        let removed = try await store.write(.remove([], major: first.revision), to: room, limits: limits)
        let again = try await store.write(write, to: room, limits: limits)
        await store.close()

        let reopened = SQLiteMetadataStore(path: file)
        try await reopened.open()
        let set = try #require(try await reopened.read(room))
        #expect(set.values == ["a": "ä 1", "b": ""])
        #expect(set.majorRevision == again.revision)
        #expect(set.items[0].updateTs == 1_700_000_000_123)
        #expect(set.items[0].author == "alice")
        #expect(set.items[0].expiresAt == 2_000_000_000_000)
        #expect(set.items[0].size == "ä 1".utf8.count)
        let next = try await reopened.write(.set([("c", "1")]), to: room, limits: limits)
        #expect(next.revision > again.revision && again.revision > removed.revision)
        await reopened.close()
    }

    @Test func sessionBoundItemsDoNotOutliveTheServer() async throws {
        let file = path()
        let store = SQLiteMetadataStore(path: file)
        try await store.open()
        var write = MetadataWrite.set([("mine", "1"), ("kept", "2")])
        write.items[0].session = SessionID(1)
        _ = try await store.write(write, to: room, limits: limits)
        await store.close()
        let reopened = SQLiteMetadataStore(path: file)
        try await reopened.open()
        #expect(try await reopened.read(room)?.values == ["kept": "2"])
        await reopened.close()
    }

    @Test func fencingTokensDoNotOutliveTheServerWhoseLocksGaveThem() async throws {
        let file = path()
        let store = SQLiteMetadataStore(path: file)
        try await store.open()
        var write = MetadataWrite.set([("owner", "a")])
        write.fence = MetadataFence(lockName: "L", token: 40)
        _ = try await store.write(write, to: room, limits: limits)
        write.fence?.token = 39
        #expect(await errorCode { _ = try await store.write(write, to: room, limits: limits) } == .storageLockNotAcquired)
        await store.close()
        // The lock module of the next run counts from 1 again.
        let reopened = SQLiteMetadataStore(path: file)
        try await reopened.open()
        write.fence?.token = 1
        _ = try await reopened.write(write, to: room, limits: limits)
        #expect(try await reopened.read(room)?.values == ["owner": "a"])
        await reopened.close()
    }

    @Test func manyConcurrentWritesAreAllKeptInGroupCommits() async throws {
        let file = path()
        let store = SQLiteMetadataStore(path: file)
        try await store.open()
        let revisions = try await withThrowingTaskGroup(of: Int64.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try await store.write(.set([("k\(index % 50)", "\(index)")]), to: .user(UserKey("app", "u\(index % 7)")), limits: limits).revision
                }
            }
            return try await group.reduce(into: [Int64]()) { $0.append($1) }
        }
        #expect(Set(revisions).count == 200)
        await store.close()
        let reopened = SQLiteMetadataStore(path: file)
        try await reopened.open()
        var items = 0
        for user in 0..<7 { items += try await reopened.read(.user(UserKey("app", "u\(user)")))?.items.count ?? 0 }
        #expect(items == (0..<200).reduce(into: Set<String>()) { $0.insert("\($1 % 7)/\($1 % 50)") }.count)
        await reopened.close()
    }

    @Test func aVersionOneDatabaseIsMigratedWithItsData() async throws {
        let file = path()
        let old = SQLiteMetadataStore(path: file)
        try await old.open(schemaVersion: 1)
        await old.close()
        // Rows as version 1 wrote them: no lease columns.
        let connection = try SQLiteConnection(path: file)
        try connection.run("INSERT INTO metadata_sets VALUES ('app', 2, 'room', 41)")
        try connection.run(
            "INSERT INTO metadata_items VALUES ('app', 2, 'room', 'topic', ?, 5, 41, 7, 'bob', 41984)", [.blob(Array("hello".utf8))])
        try connection.run("INSERT INTO store_info VALUES ('last_revision', 41)")
        #expect(try connection.integer("PRAGMA user_version") == 1)
        connection.close()

        let store = SQLiteMetadataStore(path: file)
        try await store.open()
        let set = try #require(try await store.read(room))
        #expect(set.values == ["topic": "hello"])
        #expect(set.items[0].revision == 41 && set.items[0].author == "bob" && set.items[0].expiresAt == nil)
        #expect(try await store.write(.set([("x", "1")]), to: room, limits: limits).revision == 42)
        await store.close()
        let check = try SQLiteConnection(path: file)
        #expect(try check.integer("PRAGMA user_version") == Int64(MetadataSchema.currentVersion))
        check.close()
    }

    @Test func aVersionTwoDatabaseIsMigratedWithItsDataAndFencesWritesUnderALock() async throws {
        let file = path()
        let old = SQLiteMetadataStore(path: file)
        try await old.open(schemaVersion: 2)
        _ = try await old.write(.set([("topic", "hello")]), to: room, limits: limits)
        await old.close()
        let connection = try SQLiteConnection(path: file)
        #expect(try connection.integer("PRAGMA user_version") == 2)
        #expect(try connection.integer("SELECT COUNT(*) FROM sqlite_master WHERE name = 'lock_fences'") == 0)
        connection.close()

        let store = SQLiteMetadataStore(path: file)
        try await store.open()
        #expect(try await store.read(room)?.values == ["topic": "hello"])
        var write = MetadataWrite.set([("topic", "new")])
        write.fence = MetadataFence(lockName: "L", token: .max)
        _ = try await store.write(write, to: room, limits: limits)
        write.fence?.token = .max - 1
        #expect(await errorCode { _ = try await store.write(write, to: room, limits: limits) } == .storageLockNotAcquired)
        await store.close()
        let check = try SQLiteConnection(path: file)
        #expect(try check.integer("PRAGMA user_version") == Int64(MetadataSchema.currentVersion))
        check.close()
    }

    @Test func aNewerSchemaIsRefusedNamingTheFile() async throws {
        let file = path()
        let connection = try SQLiteConnection(path: file)
        try connection.execute("PRAGMA user_version = 99")
        connection.close()
        let message = try #require(await startupError(SQLiteMetadataStore(path: file)))
        #expect(message.contains(file) && message.contains("newer"), "\(message)")
    }

    @Test func aFileThatIsNotADatabaseIsAStartupErrorNamingIt() async throws {
        let file = path()
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: file))
        let message = try #require(await startupError(SQLiteMetadataStore(path: file)))
        #expect(message.contains(file) && message.contains("not a database"), "\(message)")
        // The file is left as it was, never replaced by an empty store.
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data(repeating: 0x5A, count: 8192))
    }

    @Test func aDamagedDatabaseIsAStartupErrorNamingIt() async throws {
        let file = path()
        let store = SQLiteMetadataStore(path: file)
        try await store.open()
        for index in 0..<300 {
            _ = try await store.write(.set([("k", String(repeating: "v", count: 2000))]), to: .user(UserKey("app", "u\(index)")), limits: limits)
        }
        await store.close()
        // Overwrite the middle of the file (table pages) with garbage.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2)
        try handle.write(contentsOf: Data(repeating: 0xFF, count: 16384))
        try handle.close()
        let message = try #require(await startupError(SQLiteMetadataStore(path: file)))
        #expect(message.contains(file), "\(message)")
    }

    @Test func aPathThatCannotBeOpenedIsAStartupErrorNamingIt() async throws {
        // A directory where the file should be: unreadable as a database, for root too.
        let file = path()
        try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: true)
        let message = try #require(await startupError(SQLiteMetadataStore(path: file)))
        #expect(message.contains(file) && message.contains("cannot open"), "\(message)")
    }

    @Test func aDirectoryThatCannotBeCreatedIsAStartupErrorNamingTheFile() async throws {
        let blocker = TemporaryDirectory.make() + "/file"
        FileManager.default.createFile(atPath: blocker, contents: Data("x".utf8))
        let file = blocker + "/sub/metadata.sqlite"
        let message = try #require(await startupError(SQLiteMetadataStore(path: file)))
        #expect(message.contains(file), "\(message)")
    }

    @Test func oneFileServesOneStoreAtATime() async throws {
        let file = path()
        let first = SQLiteMetadataStore(path: file)
        try await first.open()
        _ = try await first.write(.set([("a", "1")]), to: room, limits: limits)
        let message = try #require(await startupError(SQLiteMetadataStore(path: file)))
        #expect(message.contains(file), "\(message)")
        await first.close()
        #expect(await startupError(SQLiteMetadataStore(path: file)) == nil)
    }

    @Test func aClosedStoreRefusesWithStorageNotAvailable() async throws {
        let store = SQLiteMetadataStore(path: path())
        try await store.open()
        await store.close()
        #expect(await errorCode { _ = try await store.read(room) } == .storageNotAvailable)
    }
}
