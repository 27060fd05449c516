import Foundation
import Synchronization
import Testing
import SwitchboardClient
import SwitchboardCore
import SwitchboardServer
import SwitchboardTestKit
import SwitchboardTesting
import SwitchboardTransport
import SwitchboardWire

/// A full stream channel's topic snapshot, far larger than one frame, goes out in parts that each
/// fit a frame, and the SDK reports it as one snapshot.
@Suite(.timeLimit(.minutes(5))) struct TopicSnapshotPartsTests {
    static let channel = "full"
    static let topics = (0..<8).map { "topic-\($0)" }

    /// A 64-byte user id and a 256-byte meta for member `index`.
    static func userId(_ index: Int) -> String { "member-\(index)-" + String(repeating: "u", count: 64 - "member-\(index)-".utf8.count) }
    static func meta(_ index: Int) -> String { "meta-\(index)-" + String(repeating: "m", count: 256 - "meta-\(index)-".utf8.count) }

    /// Frames a raw client accepts, far above the wire's limit, so that it measures what it gets.
    static let anySize = 4 * 1024 * 1024

    /// The members send nothing while the others fill the channel, which takes tens of seconds on
    /// a loaded machine: a heartbeat interval that long keeps the server from counting them lost.
    static let quietMembersHeartbeat = 600

    /// Logs `index` in, joins the channel and publishes in every topic, requests pipelined.
    func fill(_ index: Int, _ server: SwitchboardServer, _ group: EventLoopGroup) async throws -> RawClient {
        let client = try await RawClient.connect(to: server.url, group: group, maxMessageBytes: Self.anySize)
        let login = await client.login(Self.userId(index), heartbeatInterval: Self.quietMembersHeartbeat)
        #expect(login.isSuccess, "member \(index): \(String(describing: login))")
        client.send(.stream(id: 2, .join(channel: Self.channel, token: "", features: [])))
        for (offset, topic) in Self.topics.enumerated() {
            client.send(.stream(id: UInt32(3 + offset), .joinTopic(channel: Self.channel, topic: topic, options: TopicJoinOptions(meta: Self.meta(index)))))
        }
        _ = await client.answer(to: UInt32(2 + Self.topics.count))
        let answers = client.received.filter { $0.requestId.map { $0 >= 2 } ?? false }
        #expect(answers.count == 1 + Self.topics.count && answers.allSatisfy { $0.errorCode == nil }, "member \(index): \(answers)")
        return client
    }

    @Test func aFullChannelsSnapshotComesInPartsThatFitAFrameAndTheSDKReportsItWhole() async throws {
        let server = try await TestServer.start()
        let group = try EventLoopGroup(threads: 1)
        let capacity = Limits().streams.usersPerChannel
        let publishers = capacity - 2
        var members: [RawClient] = []
        for index in 0..<publishers { members.append(try await fill(index, server, group)) }
        let expected = Self.topics.map { topic in
            TopicInfo(topic: topic, publishers: (0..<publishers).map { TopicPublisher(userId: Self.userId($0), meta: Self.meta($0)) })
        }

        // The next member measures the frames of its snapshot.
        let measurer = try await RawClient.connect(to: server.url, group: group, maxMessageBytes: Self.anySize)
        #expect(await measurer.login(Self.userId(publishers), heartbeatInterval: Self.quietMembersHeartbeat).isSuccess)
        let loggedIn = measurer.receivedSizes.count
        measurer.send(.stream(id: 2, .join(channel: Self.channel, token: "", features: [])))
        #expect(await measurer.answer(to: 2).isSuccess)
        let parts = await measurer.waitFor(timeout: .seconds(10)) { client -> [TopicEvent]? in
            let events = client.received.compactMap(\.topicEvent)
            return events.last.map { !$0.more } ?? false ? events : nil
        }
        let snapshotParts = try #require(parts)
        #expect(snapshotParts.count > 1)
        #expect(snapshotParts.allSatisfy { $0.type == .snapshot && $0.channelName == Self.channel })
        #expect(snapshotParts.dropLast().allSatisfy { $0.more })
        let sizes = measurer.receivedSizes.dropFirst(loggedIn)
        #expect(sizes.allSatisfy { $0 <= Wire.maxFrameSize }, "frames of \(sizes.max() ?? 0) bytes; the limit is \(Wire.maxFrameSize)")
        var assembler = PartAssembler<TopicEvent>()
        let whole = snapshotParts.compactMap { assembler.add($0) }
        #expect(whole.count == 1 && whole.first?.topicInfos == expected)

        // The SDK, the channel's last member, reports one snapshot with every topic and publisher.
        let config = RtmClientConfig(appId: "test-app", userId: "sdk-member")
        config.privateConfig = RtmPrivateConfig()
        config.privateConfig?.accessPointHosts = [server.url]
        let client = try RtmClientKit(config, delegate: nil)
        let seen = Mutex<[RtmTopicEvent]>([])
        let events = client.events
        let reader = Task {
            for await event in events { if case .topic(let event) = event { seen.withLock { $0.append(event) } } }
        }
        #expect(await client.login("").1 == nil)
        let stream = try client.createStreamChannel(Self.channel)
        let option = RtmJoinChannelOption()
        option.features = []
        #expect(await stream.join(option).1 == nil)
        // A fence: member 0 stops publishing in one topic after the SDK joined, so its
        // remoteLeaveTopic reaches the SDK after every part of the snapshot; once it has arrived,
        // every snapshot part has too.
        members[0].send(.stream(id: 100, .leaveTopic(channel: Self.channel, topic: Self.topics[0])))
        #expect(await members[0].answer(to: 100).isSuccess)
        #expect(await eventually { seen.withLock { $0.contains { $0.type == .remoteLeaveTopic } } }, "the fence arrived")
        let reported = seen.withLock { $0 }.filter { $0.type == .snapshot }
        #expect(reported.count == 1)
        let snapshot = try #require(reported.first)
        #expect(snapshot.type == .snapshot && snapshot.channelName == Self.channel)
        #expect(snapshot.topicInfos.map(\.topic) == Self.topics)
        #expect(snapshot.topicInfos.allSatisfy { info in
            info.publishers.map(\.publisherUserId) == (0..<publishers).map(Self.userId)
                && info.publishers.map(\.publisherMeta) == (0..<publishers).map(Self.meta)
        })

        reader.cancel()
        client.destroy()
        withExtendedLifetime(members) {}
        await server.shutdown()
        group.shutdown()
    }
}
