import Foundation
import Testing
import SwitchboardCore
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardWire

/// The server refuses bad input with the reference's codes, and one bad connection never
/// disturbs another.
@Suite(.timeLimit(.minutes(5))) struct ProtocolTests {
    @Test func loginValidatesTheUserIdOnTheServer() async throws {
        let server = try await TestServer.start()
        let group = try EventLoopGroup(threads: 1)
        for bad in ["", String(repeating: "x", count: 65), "line\nbreak"] {
            let client = try await RawClient.connect(to: server.url, group: group)
            #expect(await client.login(bad)?.errorCode == .invalidUserId, "user id \(bad.debugDescription)")
            client.connection.close()
        }
        let fine = try await RawClient.connect(to: server.url, group: group)
        guard case .answer(_, .session(.login(let grant))) = await fine.login(String(repeating: "x", count: 64)) else {
            Issue.record("a 64-byte user id is valid")
            return
        }
        #expect(grant.heartbeatInterval == 5)
        fine.connection.close()
        await server.shutdown()
        group.shutdown()
    }

    @Test func requestsBeforeLoginAreRefusedWithNotLogin() async throws {
        let server = try await TestServer.start()
        let group = try EventLoopGroup(threads: 1)
        let client = try await RawClient.connect(to: server.url, group: group)
        client.send(.subscribe(id: 7, channel: "room", features: .defaultFeatures))
        #expect(await client.answer(to: 7)?.errorCode == .notLogin)
        client.send(.publish(id: 8, channelType: .message, channel: "room", message: .string("x"), customType: ""))
        #expect(await client.answer(to: 8)?.errorCode == .notLogin)
        #expect(await client.login("alice", id: 9)?.requestId == 9)
        client.send(.login(id: 10, Login(appId: "test-app", userId: "alice", token: "", heartbeatInterval: 5, presenceTimeout: 5)))
        #expect(await client.answer(to: 10)?.errorCode == .duplicateOperation)
        client.connection.close()
        await server.shutdown()
        group.shutdown()
    }

    @Test func garbageIsAnsweredAndOtherConnectionsCarryOn() async throws {
        let server = try await TestServer.start()
        let group = try EventLoopGroup(threads: 1)
        let bystander = try await RawClient.connect(to: server.url, group: group)
        _ = await bystander.login("bystander")
        bystander.send(.subscribe(id: 2, channel: "room", features: .defaultFeatures))
        _ = await bystander.answer(to: 2)

        let attacker = try await RawClient.connect(to: server.url, group: group)
        attacker.connection.sendBinary([0xC1, 0xFF, 0x00])
        #expect(await attacker.answer(to: 0)?.errorCode == .invalidParameter)
        // A publish with an unknown channel type keeps its id and gets invalidChannelType.
        attacker.connection.sendBinary([0x84, 0xA1, 0x74, 0xA7] + Array("publish".utf8) + [0xA2, 0x69, 0x64, 0x05,
            0xAB] + Array("channelType".utf8) + [0x09, 0xA7] + Array("channel".utf8) + [0xA1, 0x78])
        #expect(await attacker.answer(to: 5)?.errorCode == .invalidChannelType)
        // A message that is neither a string nor binary data is channelInvalidMessage (-11009).
        attacker.connection.sendBinary([0x85, 0xA1, 0x74, 0xA7] + Array("publish".utf8) + [0xA2, 0x69, 0x64, 0x06,
            0xAB] + Array("channelType".utf8) + [0x01, 0xA7] + Array("channel".utf8) + [0xA1, 0x78, 0xA7]
            + Array("message".utf8) + [0x07])
        #expect(await attacker.answer(to: 6)?.errorCode == .channelInvalidMessage)
        attacker.connection.sendText("not msgpack")
        #expect(await attacker.waitFor { $0.closeCode } == .some(.unsupportedData))

        let publisher = try await RawClient.connect(to: server.url, group: group)
        _ = await publisher.login("publisher")
        publisher.send(.publish(id: 3, channelType: .message, channel: "room", message: .string("still here"), customType: ""))
        #expect(await publisher.answer(to: 3) == .answer(id: 3, .done))
        let delivered = await bystander.waitFor { client in
            client.received.first { $0.deliveredMessage != nil }
        }
        if case .push(.message(let message))? = delivered {
            #expect(message.payload == .string("still here"))
        } else {
            Issue.record("the bystander must still get messages")
        }
        bystander.connection.close()
        publisher.connection.close()
        await server.shutdown()
        group.shutdown()
    }

    @Test func aLoginThatRacesItsConnectionClosingLeavesASuspendedSession() async throws {
        let server = try await TestServer.start()
        let recorder = EventRecorder()
        recorder.record(SessionOpened.self, on: server.bus)
        recorder.record(SessionSuspended.self, on: server.bus)
        let group = try EventLoopGroup(threads: 1)
        let client = try await RawClient.connect(to: server.url, group: group)
        client.send(.login(id: 1, Login(appId: "test-app", userId: "racer", token: "", heartbeatInterval: 1800, presenceTimeout: 300)))
        client.connection.close()
        let opened = await recorder.waitFor(SessionOpened.self)
        let suspended = await recorder.waitFor(SessionSuspended.self)
        #expect(suspended.map(\.caller) == opened.map(\.caller))
        await server.shutdown()
        group.shutdown()
    }

    @Test func theSubprotocolIsRequired() async throws {
        let server = try await TestServer.start()
        let group = try EventLoopGroup(threads: 1)
        await #expect(throws: (any Error).self) {
            _ = try await RawClient.connect(to: server.url, group: group, subprotocols: ["chat"])
        }
        await server.shutdown()
        group.shutdown()
    }

    @Test func shutdownSaysGoingAway() async throws {
        let server = try await TestServer.start()
        let group = try EventLoopGroup(threads: 1)
        let client = try await RawClient.connect(to: server.url, group: group)
        _ = await client.login("alice")
        await server.shutdown()
        #expect(await client.waitFor { $0.closeCode } == .some(.goingAway))
        group.shutdown()
    }
}
