import Foundation
import Testing
@testable import SwitchboardClient
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardCore

@Suite(.timeLimit(.minutes(5))) struct MessagingTests {
    @Test func threeSubscribersGetEveryMessageOnceAndInOrder() async throws {
        let server = try await TestServer.start()
        let clients = try ["alice", "bob", "carol"].map { try makeClient($0, server: server) }
        for (client, _) in clients {
            expectOK(await client.login(""))
            expectOK(await client.subscribe(channelName: "room", option: nil))
        }
        let (publisher, _) = clients[0]
        var sent: [MessagePayload] = []
        for index in 0..<30 {
            if index.isMultiple(of: 3) {
                let bytes: [UInt8] = [UInt8(index), 0, 0xFF, 0x80]
                sent.append(.binary(bytes))
                expectOK(await publisher.publish(channelName: "room", data: Data(bytes), option: nil))
            } else {
                let text = "message \(index) ✓"
                sent.append(.string(text))
                let options = RtmPublishOptions()
                options.customType = "chat"
                expectOK(await publisher.publish(channelName: "room", message: text, option: options))
            }
        }
        // A last message marks the end: everything sent before it has arrived once it has.
        expectOK(await publisher.publish(channelName: "room", message: "end", option: nil))
        for (_, log) in clients {
            #expect(await log.wait { $0.messages.last?.message.stringData == "end" })
            let received = log.messages.dropLast()
            #expect(received.count == 30)
            let payloads: [MessagePayload] = received.map { event in
                if let text = event.message.stringData { return .string(text) }
                return .binary(Array(event.message.rawData ?? Data()))
            }
            #expect(payloads == sent)
            #expect(received.allSatisfy { $0.publisher == "alice" && $0.channelName == "room" && $0.channelType == .message })
            #expect(received.filter { $0.message.stringData != nil }.allSatisfy { $0.customType == "chat" })
            #expect(received.allSatisfy { $0.timestamp > 1_600_000_000_000 })
        }
        for (client, _) in clients { client.destroy() }
        await server.shutdown()
    }

    @Test func userChannelDeliversPointToPointAndRefusesOfflineUsers() async throws {
        let server = try await TestServer.start()
        let (alice, aliceLog) = try makeClient("alice", server: server)
        let (bob, bobLog) = try makeClient("bob", server: server)
        expectOK(await alice.login(nil))
        expectOK(await bob.login(nil))
        let direct = RtmPublishOptions()
        direct.channelType = .user
        direct.customType = "dm"
        expectOK(await alice.publish(channelName: "bob", message: "psst", option: direct))
        #expect(await bobLog.wait { $0.messages.count == 1 })
        let message = try #require(bobLog.messages.first)
        #expect(message.channelType == .user)
        #expect(message.channelName == "alice")
        #expect(message.publisher == "alice")
        #expect(message.message.stringData == "psst")
        #expect(message.customType == "dm")
        expectError(.channelReceiverOffline, await alice.publish(channelName: "nobody", message: "?", option: direct))
        // Delivery to alice is in order: once bob's reply is there, anything wrongly sent to her before is too.
        expectOK(await bob.publish(channelName: "alice", message: "reply", option: direct))
        #expect(await aliceLog.wait { !$0.messages.isEmpty })
        #expect(aliceLog.messages.map(\.message.stringData) == ["reply"])
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func unsubscribedChannelsStopDelivering() async throws {
        let server = try await TestServer.start()
        let (alice, _) = try makeClient("alice", server: server)
        let (bob, bobLog) = try makeClient("bob", server: server)
        expectOK(await alice.login(""))
        expectOK(await bob.login(""))
        expectOK(await bob.subscribe(channelName: "news", option: nil))
        expectOK(await alice.publish(channelName: "news", message: "one", option: nil))
        #expect(await bobLog.wait { $0.messages.count == 1 })
        expectOK(await bob.unsubscribe("news"))
        expectOK(await alice.publish(channelName: "news", message: "two", option: nil))
        expectOK(await bob.subscribe(channelName: "other", option: nil))
        expectOK(await alice.publish(channelName: "other", message: "three", option: nil))
        #expect(await bobLog.wait { $0.messages.count == 2 })
        #expect(bobLog.messages.map { $0.message.stringData } == ["one", "three"])
        expectError(.channelNotSubscribed, await bob.unsubscribe("news"))
        alice.destroy()
        bob.destroy()
        await server.shutdown()
    }

    @Test func completionBlocksAndDelegatesWorkLikeTheReference() async throws {
        final class Listener: NSObject, RtmClientDelegate, @unchecked Sendable {
            // Touched only on the client's serial callback queue, then read after the test waits.
            var texts: [String] = []
            var states: [RtmLinkState] = []
            func rtmKit(_ rtmKit: RtmClientKit, didReceiveMessageEvent event: RtmMessageEvent) {
                texts.append(event.message.stringData ?? "")
            }
            func rtmKit(_ rtmKit: RtmClientKit, didReceiveLinkStateEvent event: RtmLinkStateEvent) {
                states.append(event.currentState)
            }
        }
        let server = try await TestServer.start()
        let listener = Listener()
        let queue = DispatchQueue(label: "test.callbacks")
        let (client, log) = try makeClient("alice", server: server) { $0.callbackQueue = queue }
        client.addDelegate(listener)
        let done = await withCheckedContinuation { (continuation: CheckedContinuation<RtmErrorInfo?, Never>) in
            client.login("") { _, error in
                dispatchPrecondition(condition: .onQueue(queue))
                continuation.resume(returning: error)
            }
        }
        #expect(done == nil)
        expectOK(await client.subscribe(channelName: "self", option: nil))
        let published = await withCheckedContinuation { (continuation: CheckedContinuation<RtmCommonResponse?, Never>) in
            client.publish(channelName: "self", message: "echo", option: nil) { response, _ in
                continuation.resume(returning: response)
            }
        }
        #expect(published?.channelName == "self")
        #expect(await log.wait { $0.messages.count == 1 })
        let seen = queue.sync { (listener.texts, listener.states) }
        #expect(seen.0 == ["echo"])
        #expect(seen.1 == [.connecting, .connected])
        client.removeDelegate(listener)
        client.destroy()
        await server.shutdown()
    }
}
