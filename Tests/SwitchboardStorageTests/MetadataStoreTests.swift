import Testing
import SwitchboardStorage
import SwitchboardStorageContract

/// The behaviour every metadata store shows (`MetadataStoreContract`), run against the in-memory
/// store and the SQLite store.
@Suite(.timeLimit(.minutes(2))) struct MetadataStoreTests {
    @Test(arguments: StoreKind.allCases, MetadataStoreContract.allCases)
    func theStoreKeepsTheContract(kind: StoreKind, scenario: MetadataStoreContract) async throws {
        let store = try await kind.makeStore()
        try await scenario.run(on: store)
        await store.close()
    }
}
