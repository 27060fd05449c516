import Testing
import SwitchboardCore
import SwitchboardLock
import SwitchboardLockContract

/// The built-in store keeps the contract every lock store keeps (the Redis store runs it too).
@Suite(.timeLimit(.minutes(1))) struct LockStoreContractTests {
    @Test(arguments: LockStoreContract.allCases) func theInMemoryStoreKeepsTheContract(scenario: LockStoreContract) async throws {
        try await scenario.run(on: InMemoryLockStore())
    }
}
