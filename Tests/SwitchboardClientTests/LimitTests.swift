import Foundation
import Testing
@testable import SwitchboardClient
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardCore

/// Every limit of the reference, refused by the server with the reference's code.
@Suite(.timeLimit(.minutes(5))) struct LimitTests {
    @Test func payloadCustomTypeAndChannelNameLimits() async throws {
        let server = try await TestServer.start()
        let (client, _) = try makeClient("alice", server: server)
        expectOK(await client.login(""))
        expectOK(await client.publish(channelName: "room", data: Data(count: 32 * 1024), option: nil))
        expectError(
            .channelMessageLengthExceedLimitation,
            await client.publish(channelName: "room", data: Data(count: 32 * 1024 + 1), option: nil))
        expectError(
            .channelMessageLengthExceedLimitation,
            await client.publish(channelName: "room", message: String(repeating: "é", count: 16 * 1024 + 1), option: nil))
        let options = RtmPublishOptions()
        options.customType = String(repeating: "t", count: 32)
        expectOK(await client.publish(channelName: "room", message: "x", option: options))
        options.customType = String(repeating: "t", count: 33)
        expectError(.channelCustomTypeLengthOverflow, await client.publish(channelName: "room", message: "x", option: options))
        expectOK(await client.subscribe(channelName: String(repeating: "c", count: 64), option: nil))
        expectError(.invalidChannelName, await client.subscribe(channelName: String(repeating: "c", count: 65), option: nil))
        expectError(.invalidChannelName, await client.publish(channelName: "", message: "x", option: nil))
        client.destroy()
        await server.shutdown()
    }

    @Test func fiftySubscribedChannelsAtMost() async throws {
        let server = try await TestServer.start(limits: .withoutRateLimits)
        let (client, _) = try makeClient("alice", server: server)
        expectOK(await client.login(""))
        for index in 0..<50 { expectOK(await client.subscribe(channelName: "channel-\(index)", option: nil)) }
        expectError(.channelInstanceExceedLimitation, await client.subscribe(channelName: "channel-50", option: nil))
        expectOK(await client.unsubscribe("channel-0"))
        expectOK(await client.subscribe(channelName: "channel-50", option: nil))
        client.destroy()
        await server.shutdown()
    }

    @Test func theCallRatesChangeForConnectionsAlreadyOpen() async throws {
        let clock = ManualClock()
        var limits = Limits()
        limits.messages.publishesPerSecondPerClient = 2
        let server = try await TestServer.start(clock: clock, limits: limits)
        let (client, _) = try makeClient("alice", server: server)
        expectOK(await client.login(""))
        for index in 0..<2 { expectOK(await client.publish(channelName: "room", message: "\(index)", option: nil)) }
        expectError(.operationRateExceedLimitation, await client.publish(channelName: "room", message: "2", option: nil))
        // Raised: the same connection, in the same second, publishes on.
        limits.messages.publishesPerSecondPerClient = 5
        server.updateLimits(limits)
        for index in 0..<5 { expectOK(await client.publish(channelName: "room", message: "raised \(index)", option: nil)) }
        expectError(.operationRateExceedLimitation, await client.publish(channelName: "room", message: "6th", option: nil))
        // Lifted, then set again.
        limits.messages.publishesPerSecondPerClient = nil
        server.updateLimits(limits)
        for index in 0..<20 { expectOK(await client.publish(channelName: "room", message: "lifted \(index)", option: nil)) }
        limits.messages.publishesPerSecondPerClient = 1
        server.updateLimits(limits)
        expectOK(await client.publish(channelName: "room", message: "one", option: nil))
        expectError(.operationRateExceedLimitation, await client.publish(channelName: "room", message: "two", option: nil))
        client.destroy()
        await server.shutdown()
    }

    @Test func sixtyPublishesPerSecondThenRefused() async throws {
        // The server's clock stands still, so all calls fall in one second however slow the machine.
        let clock = ManualClock()
        let server = try await TestServer.start(clock: clock)
        let (client, _) = try makeClient("alice", server: server)
        expectOK(await client.login(""))
        for index in 0..<60 { expectOK(await client.publish(channelName: "room", message: "\(index)", option: nil)) }
        let refused = await client.publish(channelName: "room", message: "61", option: nil)
        expectError(.operationRateExceedLimitation, refused)
        #expect(refused.1?.operation == "publish")
        // Subscribing draws on the other budget.
        expectOK(await client.subscribe(channelName: "room", option: nil))
        clock.advance(by: .seconds(1))
        expectOK(await client.publish(channelName: "room", message: "next second", option: nil))
        client.destroy()
        await server.shutdown()
    }

    @Test func twentyOtherCallsPerSecondThenRefused() async throws {
        let clock = ManualClock()
        let server = try await TestServer.start(clock: clock)
        let (client, _) = try makeClient("alice", server: server)
        expectOK(await client.login(""))
        for index in 0..<10 {
            expectOK(await client.subscribe(channelName: "c\(index)", option: nil))
            expectOK(await client.unsubscribe("c\(index)"))
        }
        expectError(.operationRateExceedLimitation, await client.subscribe(channelName: "c", option: nil))
        // Publishing draws on its own budget.
        expectOK(await client.publish(channelName: "room", message: "still fine", option: nil))
        clock.advance(by: .seconds(1))
        expectOK(await client.subscribe(channelName: "c", option: nil))
        client.destroy()
        await server.shutdown()
    }

    @Test func concurrentUserLimit() async throws {
        var limits = Limits()
        limits.sessions.concurrentUsers = 2
        let server = try await TestServer.start(limits: limits)
        let clients = try ["a", "b", "c"].map { try makeClient($0, server: server) }
        expectOK(await clients[0].0.login(""))
        expectOK(await clients[1].0.login(""))
        expectError(.loginNoServerResources, await clients[2].0.login(""))
        for (client, _) in clients { client.destroy() }
        await server.shutdown()
    }
}
