import Testing
import SwitchboardCore
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardWire

/// Edges of the protocol as PROTOCOL.md §2.2 and §3.1 state them.
@Suite(.timeLimit(.minutes(5))) struct FrameEdgeTests {
    @Test func aFrameWhoseTypeCannotBeReadIsAnsweredWithAnEmptyOperation() async throws {
        let server = try await TestServer.start()
        let group = try EventLoopGroup(threads: 1)
        let client = try await RawClient.connect(to: server.url, group: group)
        var writer = MessagePackWriter()
        writer.writeMapHeader(2)
        writer.writeString("t"); writer.writeUInt(7)  // "t" is not a string
        writer.writeString("id"); writer.writeUInt(3)
        client.connection.sendBinary(writer.bytes)
        guard case .error(let id, let error)? = await client.answer(to: 3) else {
            Issue.record("expected an error answer")
            return
        }
        #expect(id == 3)
        #expect(error.code == .invalidParameter)
        #expect(error.operation == "")
        client.connection.close()
        await server.shutdown()
        group.shutdown()
    }

    @Test func loginNumbersAboveTheLargestSignedIntegerAreClamped() async throws {
        let server = try await TestServer.start()
        let group = try EventLoopGroup(threads: 1)
        let client = try await RawClient.connect(to: server.url, group: group)
        var writer = MessagePackWriter()
        writer.writeMapHeader(7)
        writer.writeString("t"); writer.writeString("login")
        writer.writeString("id"); writer.writeUInt(1)
        writer.writeString("appId"); writer.writeString("test-app")
        writer.writeString("userId"); writer.writeString("alice")
        writer.writeString("token"); writer.writeString("")
        writer.writeString("heartbeatInterval"); writer.writeUInt(.max)
        writer.writeString("presenceTimeout"); writer.writeUInt(UInt64(Int64.max) + 1)
        client.connection.sendBinary(writer.bytes)
        let accepted = try #require(await client.answer(to: 1)?.loginAccepted)
        #expect(accepted.heartbeatInterval == 1800)
        #expect(accepted.presenceTimeout == 300)
        client.connection.close()
        await server.shutdown()
        group.shutdown()
    }
}
