import Testing
import SwitchboardCore
@testable import SwitchboardWire

/// A wire operation's `"t"` is the reference name of the operation it carries out, but where the
/// protocol names it apart, and a frame of that type decodes to that operation again.
@Suite(.timeLimit(.minutes(1))) struct OperationNameTests {
    @Test func everyWireNameLeadsBackToItsReferenceOperation() {
        func check<Operation: OperationNameTable>(_ names: WireOperationNames<Operation>, sdkOnly: Set<Operation> = []) {
            for operation in Operation.allCases where !sdkOnly.contains(operation) {
                #expect(names.operation(named: names.name(of: operation)) == operation, "\(operation)")
            }
            for operation in sdkOnly { #expect(names.operation(named: operation.rawValue) == nil, "\(operation)") }
        }
        check(SessionOperation.wireNames, sdkOnly: [.initialize])
        check(ChannelOperation.wireNames)
        check(StreamOperation.wireNames, sdkOnly: [.createStreamChannel])
        check(PresenceOperation.wireNames)
        check(LockOperation.wireNames, sdkOnly: [.checkLockHolder])
    }

    @Test func aStreamChannelsRenewTokenIsNamedApartFromTheSessionsOnTheWire() {
        let renew = StreamOperation.renewChannelToken(channel: "live", token: "t")
        #expect(renew.reference == .renewToken)
        #expect(renew.name == "renewChannelToken")
        #expect(StreamOperation.wireNames.operation(named: OperationName.Session.renewToken.rawValue) == nil)
        #expect(SessionOperation.renewToken(token: "t").name == OperationName.Session.renewToken.rawValue)
    }

    @Test func otherOperationsKeepTheReferenceName() {
        #expect(ClientOperation.channel(.publish(channelType: .message, channel: "c", message: .string(""), customType: "")).name == "publish")
        #expect(ClientOperation.lock(.getLocks(ChannelAddress(.message, "c"))).name == "getLocks")
        #expect(ClientOperation.presence(.whereNow(userId: "u")).name == "whereNow")
        #expect(ClientOperation.stream(.joinTopic(channel: "c", topic: "t", options: TopicJoinOptions())).name == "joinTopic")
    }

    @Test func anErrorNamesItsOperationFromTheTable() {
        let error = RtmError(.lockNotExist, operation: OperationName.Lock.acquireLock, reason: "none")
        #expect(error.operation == "acquireLock")
        #expect(AcquireLock.operation == "acquireLock")
    }
}
