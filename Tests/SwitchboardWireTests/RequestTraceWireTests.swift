import Testing
import SwitchboardCore
import SwitchboardWire

/// A request's `"trace"`: the request id a client chose for the server's logs.
@Suite(.timeLimit(.minutes(1))) struct RequestTraceWireTests {
    @Test func aTraceRoundTripsWithAnyOperation() throws {
        for operation in [ClientOperation.channel(.unsubscribe(channel: "room")), .session(.heartbeat), .presence(.whereNow(userId: "u"))] {
            let frame = ClientFrame(id: 9, operation, trace: "checkout-42")
            let decoded = try ClientFrame.decode(frame.encode())
            #expect(decoded == frame)
            #expect(decoded.trace == "checkout-42")
        }
    }

    @Test func aFrameWithoutTraceIsReadAsBefore() throws {
        let decoded = try ClientFrame.decode(pack(map(["t": .string("unsubscribe"), "id": .uint(3), "channel": .string("room")])))
        #expect(decoded == ClientFrame(id: 3, .channel(.unsubscribe(channel: "room"))))
        #expect(decoded.trace == nil)
        let withNil = try ClientFrame.decode(
            pack(map(["t": .string("unsubscribe"), "id": .uint(3), "channel": .string("room"), "trace": .nil])))
        #expect(withNil.trace == nil)
    }

    @Test func aTraceTooLongOrNotAStringIsRefusedWithTheRequestsId() {
        let long = String(repeating: "x", count: ClientFrame.maxTraceBytes + 1)
        for trace: MessagePackValue in [.string(long), .uint(5)] {
            let error = #expect(throws: WireError.self) {
                try ClientFrame.decode(pack(map(["t": .string("heartbeat"), "id": .uint(4), "trace": trace])))
            }
            #expect(error?.requestId == 4)
            #expect(error?.key == "trace")
        }
    }

    @Test func theOperationNamesItsChannelForLogs() {
        #expect(ClientOperation.channel(.publish(channelType: .message, channel: "room", message: .string(""), customType: "")).channelName == "room")
        #expect(ClientOperation.lock(.getLocks(ChannelAddress(.message, "locks"))).channelName == "locks")
        #expect(ClientOperation.stream(.leave(channel: "s")).channelName == "s")
        #expect(ClientOperation.session(.heartbeat).channelName == nil)
    }
}
