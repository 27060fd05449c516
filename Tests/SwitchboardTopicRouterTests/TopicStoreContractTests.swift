import Testing
import SwitchboardCore
import SwitchboardTopicContract
import SwitchboardTopicRouter

/// The built-in store keeps the contract every topic store keeps (the Redis store runs it too).
@Suite(.timeLimit(.minutes(1))) struct TopicStoreContractTests {
    @Test(arguments: TopicStoreContract.allCases) func theInMemoryStoreKeepsTheContract(scenario: TopicStoreContract) async throws {
        try await scenario.run(on: InMemoryTopicStore())
    }
}
