import Foundation
import Testing
@testable import SwitchboardClient
@testable import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardCore

/// The reference's error codes where a porting app meets them, end to end.
@Suite(.timeLimit(.minutes(5))) struct ErrorCodeTests {
    @Test func unansweredUnsubscribeLeaveAndJoinTimeOutWithTheirOwnCodes() async throws {
        // Seed 000: -11022 (unsubscribe), -11028 (leave) and -11007 (join) for the calls that
        // find no answer in time, not the generic -10025.
        let gate = HoldingGate()
        let server = try await TestServer.start(modules: { $0.extensions.append(gate) })
        let clock = ManualClock()
        let (bob, _) = try makeClient("bob", server: server, clock: clock) { $0.heartbeatInterval = 1800 }
        expectOK(await bob.login(""))
        expectOK(await bob.subscribe(channelName: "room", option: nil))
        let live = try bob.createStreamChannel("live")
        expectOK(await live.join(RtmJoinChannelOption()))
        let other = try bob.createStreamChannel("other")
        // Everything after the held call waits behind it on the server.
        bob.callExtension("hold", body: "", completion: nil)
        #expect(await eventually { gate.held == 1 })
        let unsubscribe = Task { await bob.unsubscribe("room") }
        let leave = Task { await live.leave() }
        let join = Task { await other.join(RtmJoinChannelOption()) }
        #expect(await eventuallyAsync { await bob.engine.pending.count >= 4 })
        clock.advance(by: .seconds(11))
        expectError(.channelUnsubscribeFailed, await unsubscribe.value)
        expectError(.channelLeaveFailed, await leave.value)
        expectError(.channelJoinFailed, await join.value)
        gate.open()
        bob.destroy()
        await server.shutdown()
    }

    @Test func aServiceLeftOutOfServiceTypeIsRefusedWithServiceNotSupport() async throws {
        let server = try await TestServer.start()
        let (messagesOnly, _) = try makeClient("alice", server: server) { $0.privateConfig?.serviceType = .message }
        do {
            _ = try messagesOnly.createStreamChannel("live")
            Issue.record("a stream channel needs the stream service")
        } catch let error as RtmErrorInfo {
            #expect(error.errorCode == .serviceNotSupport)
        }
        expectOK(await messagesOnly.login(""))
        expectOK(await messagesOnly.subscribe(channelName: "room", option: nil))
        let (streamOnly, _) = try makeClient("bob", server: server) { $0.privateConfig?.serviceType = .stream }
        expectOK(await streamOnly.login(""))
        expectError(.serviceNotSupport, await streamOnly.subscribe(channelName: "room", option: nil))
        expectError(.serviceNotSupport, await streamOnly.publish(channelName: "room", message: "x", option: nil))
        let direct = RtmPublishOptions()
        direct.channelType = .user
        expectOK(await streamOnly.publish(channelName: "alice", message: "to a user", option: direct))
        let live = try streamOnly.createStreamChannel("live")
        expectOK(await live.join(RtmJoinChannelOption()))
        messagesOnly.destroy()
        streamOnly.destroy()
        await server.shutdown()
    }

    @Test func callsLostWithTheConnectionOrMadeWhileItIsDownGetTheirFeaturesCodes() async throws {
        let gate = HoldingGate()
        let server = try await TestServer.start(modules: { $0.extensions.append(gate) })
        let (bob, bobLog) = try makeClient("bob", server: server)
        expectOK(await bob.login(""))
        expectOK(await bob.subscribe(channelName: "room", option: nil))
        let live = try bob.createStreamChannel("live")
        expectOK(await live.join(RtmJoinChannelOption()))
        // Sent, then the connection goes before the answers: each call gets its own failure.
        bob.callExtension("hold", body: "", completion: nil)
        #expect(await eventually { gate.held == 1 })
        let publish = Task { await bob.publish(channelName: "room", message: "lost", option: nil) }
        let subscribe = Task { await bob.subscribe(channelName: "hall", option: nil) }
        let leave = Task { await live.leave() }
        #expect(await eventuallyAsync { await bob.engine.pending.count >= 4 })
        server.dropConnections(ofUser: "bob")
        expectError(.channelPublishMessageFailed, await publish.value)
        expectError(.channelSubscribeFailed, await subscribe.value)
        expectError(.channelLeaveFailed, await leave.value)
        // While the link is down, stream channel and presence calls say so in their own terms.
        gate.open()
        await server.shutdown()
        #expect(await bobLog.wait { $0.linkStates.last { $0.serviceType == .message }?.currentState == .disconnected })
        expectError(.channelNotConnected, await live.joinTopic("video", option: nil))
        let (state, stateError) = try await #require(bob.getPresence()).getState(channelName: "room", channelType: .message, userId: "bob")
        #expect(state == nil && stateError?.errorCode == .presenceNotConnected)
        expectError(.notConnected, await bob.publish(channelName: "room", message: "x", option: nil))
        bob.destroy()
    }

    @Test func aCustomTypeWithAControlCharacterIsInvalid() async throws {
        let server = try await TestServer.start()
        let (bob, _) = try makeClient("bob", server: server)
        expectOK(await bob.login(""))
        let option = RtmPublishOptions()
        option.customType = "frame\u{1}"
        expectError(.channelInvalidCustomType, await bob.publish(channelName: "room", message: "x", option: option))
        option.customType = String(repeating: "t", count: 33)
        expectError(.channelCustomTypeLengthOverflow, await bob.publish(channelName: "room", message: "x", option: option))
        option.customType = "frame"
        expectOK(await bob.publish(channelName: "room", message: "x", option: option))
        bob.destroy()
        await server.shutdown()
    }

    @Test func aFeatureTheServerDoesNotRunAnswersItsNotAvailableCode() async throws {
        // A server embedded without the lock, storage or presence module (seed 000: -14009,
        // -12019, -13002), rather than the bus's serviceNotSupport.
        let server = try await TestServer.start(modules: { modules in
            modules.lock = AbsentModule()
            modules.storage = AbsentModule()
            modules.presence = AbsentModule()
        })
        let (bob, _) = try makeClient("bob", server: server)
        expectOK(await bob.login(""))
        expectOK(await bob.subscribe(channelName: "room", option: nil))
        expectError(.lockNotAvailable, try await #require(bob.getLock()).setLock(channelName: "room", channelType: .message, lockName: "L"))
        expectError(.storageNotAvailable, try await #require(bob.getStorage()).subscribeUserMetadata(userId: "alice"))
        expectError(.presenceNotWritable, try await #require(bob.getPresence()).setState(
            channelName: "room", channelType: .message, items: ["k": "v"]))
        expectOK(await bob.publish(channelName: "room", message: "the rest still works", option: nil))
        bob.destroy()
        await server.shutdown()
    }
}

/// A module that handles nothing: the server runs without the feature it replaces.
struct AbsentModule: Module {
    let name = "absent"
    func start(_ context: ModuleContext) async {}
}
