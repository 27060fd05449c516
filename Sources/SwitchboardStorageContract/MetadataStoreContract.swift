import Testing
import SwitchboardCore
import SwitchboardStorage

/// What every `MetadataStore` does, whatever keeps its data: the compare-and-set rules, the
/// limits, app isolation, leases and fences. Each scenario runs on a new, opened, empty store; the
/// store tests of each kind run them all (`@Test(arguments: MetadataStoreContract.allCases)`).
public enum MetadataStoreContract: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case setAddsInOrderAndOverwrites
    case revisionsAreCheckedPerItemAndForTheSet
    case updateNeedsExistingItemsAndAFailedWriteChangesNothing
    case removeTakesItemsOrTheWholeSetAndRevisionsAreNeverReused
    case setLimitsAreEnforcedOnTheStoredSet
    case appsAndScopesNeverMeet
    case leasesGoWhenTheirTimeRunsOutOrTheirSessionEnds
    case concurrentRevisionedUpdatesHaveExactlyOneWinnerPerRevision
    case aWriteUnderALockIsRefusedOnceALaterTokenHasCommitted

    public var testDescription: String { rawValue }

    /// Runs the scenario on `store` (new, opened and empty).
    public func run(on store: any MetadataStore) async throws {
        switch self {
        case .setAddsInOrderAndOverwrites: try await setAddsInOrderAndOverwrites(store)
        case .revisionsAreCheckedPerItemAndForTheSet: try await revisionsAreCheckedPerItemAndForTheSet(store)
        case .updateNeedsExistingItemsAndAFailedWriteChangesNothing: try await updateNeedsExistingItems(store)
        case .removeTakesItemsOrTheWholeSetAndRevisionsAreNeverReused: try await removeTakesItemsOrTheWholeSet(store)
        case .setLimitsAreEnforcedOnTheStoredSet: try await setLimitsAreEnforced(store)
        case .appsAndScopesNeverMeet: try await appsAndScopesNeverMeet(store)
        case .leasesGoWhenTheirTimeRunsOutOrTheirSessionEnds: try await leasesGo(store)
        case .concurrentRevisionedUpdatesHaveExactlyOneWinnerPerRevision: try await oneWinnerPerRevision(store)
        case .aWriteUnderALockIsRefusedOnceALaterTokenHasCommitted: try await staleFencesAreRefused(store)
        }
    }

    private static let room = MetadataTarget.channel(ChannelKey(app: "app", .message, "room"))
    private static let alice = MetadataTarget.user(UserKey("app", "alice"))
    private static let limits = Limits()

    private func setAddsInOrderAndOverwrites(_ store: any MetadataStore) async throws {
        let (room, alice, limits) = (Self.room, Self.alice, Self.limits)
        let first = try await store.write(.set([("b", "1"), ("a", "2")], author: "alice"), to: room, limits: limits)
        let second = try await store.write(.set([("c", "3"), ("b", "4")]), to: room, limits: limits)
        #expect(second.revision > first.revision)
        let set = try #require(try await store.read(room))
        #expect(set.items.map(\.key) == ["b", "a", "c"])
        #expect(set.values == ["a": "2", "b": "4", "c": "3"])
        #expect(set.majorRevision == second.revision)
        #expect(set.items.map(\.revision) == [second.revision, first.revision, second.revision])
        #expect(set.items[1].author == "alice")
        #expect(set.items[0].author == "")
        #expect(try await store.read(alice) == nil)
    }

    private func revisionsAreCheckedPerItemAndForTheSet(_ store: any MetadataStore) async throws {
        let (room, alice, limits) = (Self.room, Self.alice, Self.limits)
        let created = try await store.write(.set([("price", "1"), ("name", "tee")]), to: room, limits: limits)
        let r = created.revision
        #expect(await errorCode { _ = try await store.write(.set([("price", "2")], revisions: ["price": r + 1]), to: room, limits: limits) } == .storageOutdatedRevision)
        #expect(await errorCode { _ = try await store.write(.set([("price", "2")], major: r + 1), to: room, limits: limits) } == .storageOutdatedRevision)
        #expect(await errorCode { _ = try await store.write(.set([("new", "2")], revisions: ["new": r]), to: room, limits: limits) } == .storageInvalidMetadataItem)
        #expect(await errorCode { _ = try await store.write(.set([("x", "1")], major: 5), to: alice, limits: limits) } == .storageInvalidMetadataInstance)
        let updated = try await store.write(.set([("price", "2")], major: r, revisions: ["price": r]), to: room, limits: limits)
        #expect(try await store.read(room)?.values["price"] == "2")
        // The same revision does not win twice.
        #expect(await errorCode { _ = try await store.write(.set([("price", "3")], revisions: ["price": r]), to: room, limits: limits) } == .storageOutdatedRevision)
        #expect(try await store.read(room)?.majorRevision == updated.revision)
    }

    private func updateNeedsExistingItems(_ store: any MetadataStore) async throws {
        let (room, alice, limits) = (Self.room, Self.alice, Self.limits)
        let created = try await store.write(.set([("a", "1"), ("b", "1")]), to: room, limits: limits)
        #expect(await errorCode { _ = try await store.write(.update([("a", "2"), ("missing", "2")]), to: room, limits: limits) } == .storageInvalidMetadataItem)
        #expect(await errorCode { _ = try await store.write(.set([("a", "2"), ("b", "2")], revisions: ["b": 999]), to: room, limits: limits) } == .storageOutdatedRevision)
        let unchanged = try #require(try await store.read(room))
        #expect(unchanged.values == ["a": "1", "b": "1"])
        #expect(unchanged.majorRevision == created.revision)
        _ = try await store.write(.update([("a", "2")]), to: room, limits: limits)
        #expect(try await store.read(room)?.values == ["a": "2", "b": "1"])
        #expect(await errorCode { _ = try await store.write(.update([("a", "3")]), to: alice, limits: limits) } == .storageInvalidMetadataItem)
    }

    private func removeTakesItemsOrTheWholeSet(_ store: any MetadataStore) async throws {
        let (room, limits) = (Self.room, Self.limits)
        let first = try await store.write(.set([("a", "1"), ("b", "1"), ("c", "1")]), to: room, limits: limits)
        #expect(await errorCode { _ = try await store.write(.remove(["zzz"]), to: room, limits: limits) } == .storageInvalidMetadataItem)
        let removed = try await store.write(.remove(["b"], revisions: ["b": first.revision]), to: room, limits: limits)
        #expect(removed.set?.items.map(\.key) == ["a", "c"])
        let gone = try await store.write(.remove([], major: removed.revision), to: room, limits: limits)
        #expect(gone.set == nil)
        #expect(try await store.read(room) == nil)
        #expect(await errorCode { _ = try await store.write(.remove([]), to: room, limits: limits) } == .storageInvalidMetadataInstance)
        let again = try await store.write(.set([("a", "1")]), to: room, limits: limits)
        #expect(again.revision > gone.revision)
        // Removing the last item removes the set.
        let last = try await store.write(.remove(["a"]), to: room, limits: limits)
        #expect(last.set == nil)
    }

    private func setLimitsAreEnforced(_ store: any MetadataStore) async throws {
        let room = Self.room
        var small = Limits()
        small.storage.itemsPerSet = 3
        small.storage.setMaxBytes = 20
        _ = try await store.write(.set([("a", "12345"), ("b", "12345")]), to: room, limits: small)
        #expect(await errorCode { _ = try await store.write(.set([("c", "12345678")]), to: room, limits: small) } == .storageMetadataLengthOverflow)
        _ = try await store.write(.set([("c", "1")]), to: room, limits: small)
        #expect(await errorCode { _ = try await store.write(.set([("d", "")]), to: room, limits: small) } == .storageMetadataItemExceedLimitation)
        #expect(try await store.read(room)?.items.count == 3)
    }

    private func appsAndScopesNeverMeet(_ store: any MetadataStore) async throws {
        let targets: [MetadataTarget] = [
            .channel(ChannelKey(app: "one", .message, "x")), .channel(ChannelKey(app: "two", .message, "x")),
            .channel(ChannelKey(app: "one", .stream, "x")), .user(UserKey("one", "x")), .user(UserKey("two", "x")),
        ]
        for (index, target) in targets.enumerated() {
            _ = try await store.write(.set([("k", "\(index)")]), to: target, limits: Self.limits)
        }
        for (index, target) in targets.enumerated() {
            #expect(try await store.read(target)?.values == ["k": "\(index)"])
        }
    }

    private func leasesGo(_ store: any MetadataStore) async throws {
        let (room, alice, limits) = (Self.room, Self.alice, Self.limits)
        var write = MetadataWrite.set([("ttl", "1"), ("session", "2"), ("kept", "3")])
        write.items[0].expiresAt = 1_000
        write.items[1].session = SessionID(7)
        let written = try await store.write(write, to: room, limits: limits)
        _ = try await store.write(.set([("other", "x")]), to: alice, limits: limits)
        #expect(try await store.removeExpired(now: WallClockTime(millisecondsSince1970: 999)).isEmpty)
        let expired = try await store.removeExpired(now: WallClockTime(millisecondsSince1970: 1_000))
        #expect(expired.map(\.target) == [room])
        #expect(expired.first?.set?.items.map(\.key) == ["session", "kept"])
        #expect(try #require(expired.first).revision > written.revision)
        #expect(try await store.removeItems(of: SessionID(8)).isEmpty)
        let ended = try await store.removeItems(of: SessionID(7))
        #expect(ended.first?.set?.values == ["kept": "3"])
        #expect(try await store.read(alice)?.values == ["other": "x"])
    }

    private func oneWinnerPerRevision(_ store: any MetadataStore) async throws {
        let (room, limits) = (Self.room, Self.limits)
        var revision = try await store.write(.set([("bid", "0")]), to: room, limits: limits).revision
        for round in 1...5 {
            let current = revision
            let winners = await withTaskGroup(of: Int64?.self) { group in
                for client in 0..<20 {
                    group.addTask {
                        try? await store.write(.update([("bid", "\(round)-\(client)")], revisions: ["bid": current]), to: room, limits: limits).revision
                    }
                }
                return await group.reduce(into: [Int64]()) { if let won = $1 { $0.append(won) } }
            }
            #expect(winners.count == 1, "round \(round): \(winners.count) winners")
            revision = try #require(winners.first)
        }
    }

    private func staleFencesAreRefused(_ store: any MetadataStore) async throws {
        let (room, limits) = (Self.room, Self.limits)
        let lobby = MetadataTarget.channel(ChannelKey(app: "app", .message, "lobby"))
        func fenced(_ value: String, _ lock: String, _ token: UInt64, revisions: [String: Int64] = [:]) -> MetadataWrite {
            var write = MetadataWrite.set([("owner", value)], revisions: revisions)
            write.fence = MetadataFence(lockName: lock, token: token)
            return write
        }
        _ = try await store.write(fenced("a", "L", 5), to: room, limits: limits)
        let later = try await store.write(fenced("b", "L", 6), to: room, limits: limits)
        // The owner of token 5 lost the lock after its check; its write arrives last.
        #expect(await errorCode { _ = try await store.write(fenced("a, stale", "L", 5), to: room, limits: limits) } == .storageLockNotAcquired)
        #expect(try await store.read(room)?.values == ["owner": "b"])
        #expect(try await store.read(room)?.majorRevision == later.revision)
        // The current owner writes again; another lock, set or a write under no lock is not held back.
        _ = try await store.write(fenced("b again", "L", 6), to: room, limits: limits)
        _ = try await store.write(fenced("m", "M", 1), to: room, limits: limits)
        _ = try await store.write(fenced("a", "L", 5), to: lobby, limits: limits)
        _ = try await store.write(.set([("free", "1")]), to: room, limits: limits)
        // A refused write keeps no token: 9 failed its revision check, so 7 still writes.
        #expect(await errorCode { _ = try await store.write(fenced("c", "L", 9, revisions: ["owner": 999]), to: room, limits: limits) } == .storageOutdatedRevision)
        _ = try await store.write(fenced("c", "L", 7), to: room, limits: limits)
        #expect(try await store.read(room)?.values == ["owner": "c", "free": "1"])
    }
}
