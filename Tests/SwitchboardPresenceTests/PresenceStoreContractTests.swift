import Testing
import SwitchboardCore
import SwitchboardPresence
import SwitchboardPresenceContract

/// The built-in store keeps the contract every presence store keeps (the Redis store runs it too).
@Suite(.timeLimit(.minutes(1))) struct PresenceStoreContractTests {
    @Test(arguments: PresenceStoreContract.allCases) func theInMemoryStoreKeepsTheContract(scenario: PresenceStoreContract) async throws {
        try await scenario.run(on: InMemoryPresenceStore())
    }
}
