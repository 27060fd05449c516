import Foundation
import Testing
@testable import SwitchboardClient
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardCore

/// Makes a call again while the server refuses it as too frequent: a test's own setup, made
/// faster than the server's budgets allow.
func paced<Response>(_ call: () async -> (Response?, RtmErrorInfo?)) async -> (Response?, RtmErrorInfo?) {
    var result = await call()
    for _ in 0..<100 where result.1?.errorCode == .operationRateExceedLimitation {
        try? await Task.sleep(for: .milliseconds(100))
        result = await call()
    }
    return result
}

/// The requests a server answered with an error, by operation, read from its metrics.
func failedRequests(of server: SwitchboardServer) async -> [String: Int] {
    var failed: [String: Int] = [:]
    for line in await server.metricsText().split(separator: "\n") where line.hasPrefix("switchboard_requests_total{") {
        guard line.contains("result=\"error\""), let count = Int(line.split(separator: " ").last ?? ""), count > 0,
            let operation = line.split(separator: "\"").dropFirst().first
        else { continue }
        failed[String(operation)] = count
    }
    return failed
}

/// What the SDK rebuilds after the server lost its session (seed 004: "the channel subscription
/// relationship and temporary user status are automatically restored"), against a real server
/// with the reference's rate budgets.
@Suite(.timeLimit(.minutes(5))) struct RestoreTests {
    @Test func aServerRestartGetsEverythingBackWithinTheServersBudgetsAndNothingRefused() async throws {
        // The first server lifts its budgets so the scene is set up quickly; the restarted one
        // has the reference's, which the restore must keep to.
        var server = try await TestServer.start(limits: .withoutRateLimits)
        let port = try #require(server.port)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("restore-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (bob, bobLog) = try makeClient("bob", server: server) { config in
            let log = RtmLogConfig()
            log.filePath = folder.path
            log.level = .info
            config.logConfig = log
        }
        expectOK(await bob.login(""))
        let channels = (0..<50).map { "room-\($0)" }
        for channel in channels { expectOK(await bob.subscribe(channelName: channel, option: nil)) }
        let presence = try #require(bob.getPresence())
        for channel in channels.prefix(10) {
            expectOK(await presence.setState(channelName: channel, channelType: .message, items: ["seat": channel]))
        }
        let live = try bob.createStreamChannel("live")
        let join = RtmJoinChannelOption()
        join.features = [.presence]
        expectOK(await live.join(join))
        expectOK(await presence.setState(channelName: "live", channelType: .stream, items: ["cam": "on"]))
        // Twenty topics, each of one publisher (a publisher joins at most 8 topics of a channel).
        let topics = (0..<20).map { "topic-\($0)" }
        func publisher(of index: Int) -> String { "publisher-\(index / 8)" }
        for (index, topic) in topics.enumerated() {
            let option = RtmTopicOption()
            option.users = [publisher(of: index)]
            #expect(await live.subscribeTopic(topic, option: option).0?.succeedUsers == [publisher(of: index)])
        }
        let users = (0..<15).map { "user-\($0)" }
        let storage = try #require(bob.getStorage())
        for user in users { expectOK(await storage.subscribeUserMetadata(userId: user)) }

        await server.shutdown()
        #expect(await bobLog.wait { $0.linkStates.last?.currentState == .disconnected })
        server = try await TestServer.start(configure: { $0.port = port })
        let restoredAt = bobLog.linkStates.count
        #expect(await bobLog.wait(timeout: .seconds(30)) { log in
            log.linkStates.dropFirst(restoredAt).contains { $0.currentState == .connected && $0.serviceType == .message }
                && log.linkStates.dropFirst(restoredAt).contains { $0.currentState == .connected && $0.serviceType == .stream }
        })
        let back = bobLog.linkStates.dropFirst(restoredAt).filter { $0.currentState == .connected }
        #expect(back.allSatisfy { $0.unrestoredChannels.isEmpty && !$0.isResumed })
        #expect(back.first { $0.serviceType == .message }?.affectedChannels == channels.sorted())
        #expect(back.first { $0.serviceType == .stream }?.affectedChannels == ["live"])
        // Nothing was refused: the restarted server answered every request of the restore.
        #expect(await failedRequests(of: server).isEmpty)
        let logged = (try? String(contentsOf: folder.appendingPathComponent("agora.log"), encoding: .utf8)) ?? ""
        #expect(!logged.contains("too frequent"), "the restore kept within the budgets without retrying")

        // Each piece is back, seen from other clients.
        let (alice, _) = try makeClient("alice", server: server)
        expectOK(await alice.login(""))
        let alicePresence = try #require(alice.getPresence())
        let (whereBob, whereError) = await alicePresence.whereNow(userId: "bob")
        #expect(whereError == nil)
        #expect(Set(whereBob?.channels.map(\.channelName) ?? []) == Set(channels + ["live"]))
        for channel in channels.prefix(10) {
            let (state, _) = await paced { await alicePresence.getState(channelName: channel, channelType: .message, userId: "bob") }
            #expect(state?.state.states == ["seat": channel])
        }
        let (liveState, _) = await alicePresence.getState(channelName: "live", channelType: .stream, userId: "bob")
        #expect(liveState?.state.states == ["cam": "on"])

        var publishers: [RtmClientKit] = []
        var publisherLive: RtmStreamChannel?
        for (index, topic) in topics.enumerated() {
            if index % 8 == 0 {
                let (client, _) = try makeClient(publisher(of: index), server: server)
                expectOK(await client.login(""))
                publishers.append(client)
                publisherLive = try client.createStreamChannel("live")
                expectOK(try await #require(publisherLive).join(RtmJoinChannelOption()))
            }
            let channel = try #require(publisherLive)
            expectOK(await paced { await channel.joinTopic(topic, option: nil) })
            expectOK(await channel.publishTopicMessage(topic: topic, message: topic, option: nil))
        }
        #expect(await bobLog.wait { Set($0.messages.compactMap(\.channelTopic)) == Set(topics) })

        let aliceStorage = try #require(alice.getStorage())
        let before = bobLog.storageEvents.count
        for user in users {
            let data = RtmMetadata()
            data.items = [RtmMetadataItem(key: "note", value: user)]
            expectOK(await paced { await aliceStorage.setUserMetadata(userId: user, data: data, options: nil) })
        }
        #expect(await bobLog.wait { log in
            Set(log.storageEvents.dropFirst(before).filter { $0.eventType == .update }.map(\.target)) == Set(users)
        })
        alice.destroy()
        for client in publishers { client.destroy() }
        bob.destroy()
        await server.shutdown()
    }
}
