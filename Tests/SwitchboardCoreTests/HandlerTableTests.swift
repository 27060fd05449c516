import Testing
@testable import SwitchboardCore

/// The lock-free table of request handlers: every registered type finds its own handler.
@Suite(.timeLimit(.minutes(2))) struct HandlerTableTests {
    @Test(arguments: [0, 1, 4, 5, 100])
    func everyTypeFindsItsHandlerAndNoOtherTypeFindsOne(count: Int) {
        // Objects stand in for types: their identifiers are addresses like a type's metadata.
        let keys = (0..<(2 * count)).map { _ in AnyRequestHandler() }
        let handlers = (0..<count).map { _ in AnyRequestHandler() }
        var entries: [ObjectIdentifier: AnyRequestHandler] = [:]
        for index in 0..<count { entries[ObjectIdentifier(keys[index])] = handlers[index] }
        let table = HandlerTable(entries)
        for index in 0..<count {
            #expect(table.handler(for: ObjectIdentifier(keys[index]))?.takeUnretainedValue() === handlers[index])
        }
        for index in count..<(2 * count) { #expect(table.handler(for: ObjectIdentifier(keys[index])) == nil) }
        #expect(table.handler(for: ObjectIdentifier(HandlerTableTests.self)) == nil)
    }

    @Test func aReplacedHandlerAnswersNoMoreAndARemovedOneIsGone() async throws {
        let bus = EventBus()
        bus.handleImmediately(Ping.self) { _ in "first" }
        #expect(try bus.answerAtOnce(Ping.self) { Ping() } == "first")
        bus.handleImmediately(Ping.self) { _ in "second" }
        #expect(try bus.answerAtOnce(Ping.self) { Ping() } == "second")
        #expect(bus.hasHandler(Ping.self))
        bus.removeHandler(Ping.self)
        #expect(!bus.hasHandler(Ping.self))
        #expect(try bus.answerAtOnce(Ping.self) { Ping() } == nil)
        bus.handleImmediately(Ping.self) { _ in "third" }
        bus.close()
        #expect(try bus.answerAtOnce(Ping.self) { Ping() } == nil)
    }
}

private struct Ping: BusRequest {
    typealias Response = String
    static let operation = "ping"
}
