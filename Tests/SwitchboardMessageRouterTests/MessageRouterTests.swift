import Testing
import SwitchboardCore
import SwitchboardMessageRouter
import SwitchboardTesting

@Suite struct MessageRouterTests {
    let alice = SessionID(1), bob = SessionID(2), carol = SessionID(3)

    func world(limits: Limits = Limits()) async -> (ModuleHarness, FakeSessions) {
        let sessions = FakeSessions()
        sessions.add(alice, for: "alice")
        sessions.add(bob, for: "bob")
        sessions.add(carol, for: "carol")
        let harness = await ModuleHarness(limits: limits, modules: [sessions, MessageRouter()])
        harness.recorder.record(ChannelJoined.self, on: harness.bus)
        harness.recorder.record(ChannelLeft.self, on: harness.bus)
        return (harness, sessions)
    }

    func expectError(_ code: RtmErrorCode, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected \(code)")
        } catch {
            #expect((error as? RtmError)?.code == code, "\(error)")
        }
    }

    @Test func subscribersReceiveEachMessageOnceInOrder() async throws {
        let (harness, _) = await world()
        for (session, user) in [(alice, "alice"), (bob, "bob"), (carol, "carol")] {
            _ = try await harness.bus.request(Subscribe(session: session, userId: user, channelName: "room"))
        }
        for index in 0..<20 {
            let payload: MessagePayload = index.isMultiple(of: 2) ? .string("m\(index)") : .binary([UInt8(index), 0, 255])
            _ = try await harness.bus.request(
                Publish(session: alice, userId: "alice", channelType: .message, channelName: "room", payload: payload, customType: "t"))
        }
        for session in [alice, bob, carol] {
            let messages = harness.outbox.messages(to: session)
            #expect(messages.count == 20)
            #expect(messages.map(\.payload) == (0..<20).map { $0.isMultiple(of: 2) ? .string("m\($0)") : .binary([UInt8($0), 0, 255]) })
            #expect(messages.allSatisfy { $0.publisher == "alice" && $0.channelName == "room" && $0.channelType == .message && $0.customType == "t" && $0.channelTopic.isEmpty })
        }
        let joined = await harness.recorder.waitFor(ChannelJoined.self, count: 3)
        #expect(joined.map(\.channel) == Array(repeating: ChannelKey(.message, "room"), count: 3))
    }

    @Test func subscribersWithoutTheMessageFeatureGetNoMessages() async throws {
        let (harness, _) = await world()
        _ = try await harness.bus.request(Subscribe(session: bob, userId: "bob", channelName: "room", features: [.presence]))
        _ = try await harness.bus.request(Publish(session: alice, userId: "alice", channelType: .message, channelName: "room", payload: .string("x")))
        #expect(harness.outbox.messages(to: bob).isEmpty)
    }

    @Test func userChannelDeliversToTheUserAndRefusesOfflineUsers() async throws {
        let (harness, _) = await world()
        _ = try await harness.bus.request(Publish(session: alice, userId: "alice", channelType: .user, channelName: "bob", payload: .string("psst")))
        let got = harness.outbox.messages(to: bob)
        #expect(got.count == 1)
        #expect(got.first?.channelType == .user)
        #expect(got.first?.channelName == "alice")
        #expect(got.first?.publisher == "alice")
        await expectError(.channelReceiverOffline) {
            _ = try await harness.bus.request(Publish(session: alice, userId: "alice", channelType: .user, channelName: "dave", payload: .string("?")))
        }
    }

    @Test func limitsAreRefusedWithTheReferenceCodes() async throws {
        let (harness, _) = await world()
        let bus = harness.bus
        await expectError(.channelMessageLengthExceedLimitation) {
            _ = try await bus.request(Publish(session: alice, userId: "alice", channelType: .message, channelName: "room", payload: .binary(Array(repeating: 0, count: 32 * 1024 + 1))))
        }
        _ = try await bus.request(Publish(session: alice, userId: "alice", channelType: .message, channelName: "room", payload: .binary(Array(repeating: 0, count: 32 * 1024))))
        await expectError(.channelCustomTypeLengthOverflow) {
            _ = try await bus.request(Publish(session: alice, userId: "alice", channelType: .message, channelName: "room", payload: .string("x"), customType: String(repeating: "c", count: 33)))
        }
        await expectError(.invalidChannelName) {
            _ = try await bus.request(Subscribe(session: alice, userId: "alice", channelName: String(repeating: "n", count: 65)))
        }
        await expectError(.invalidChannelName) {
            _ = try await bus.request(Subscribe(session: alice, userId: "alice", channelName: ""))
        }
        await expectError(.invalidChannelType) {
            _ = try await bus.request(Publish(session: alice, userId: "alice", channelType: .stream, channelName: "room", payload: .string("x")))
        }
        for index in 0..<50 {
            _ = try await bus.request(Subscribe(session: alice, userId: "alice", channelName: "c\(index)"))
        }
        await expectError(.channelInstanceExceedLimitation) {
            _ = try await bus.request(Subscribe(session: alice, userId: "alice", channelName: "c50"))
        }
        // Subscribing again to a channel already held is not a new channel.
        _ = try await bus.request(Subscribe(session: alice, userId: "alice", channelName: "c0", features: [.message]))
        #expect(try await bus.request(ChannelsOfSession(session: alice)).count == 50)
    }

    @Test func unsubscribeStopsDeliveryAndUnknownChannelsAreRefused() async throws {
        let (harness, _) = await world()
        _ = try await harness.bus.request(Subscribe(session: bob, userId: "bob", channelName: "room"))
        _ = try await harness.bus.request(Unsubscribe(session: bob, userId: "bob", channelName: "room"))
        _ = try await harness.bus.request(Publish(session: alice, userId: "alice", channelType: .message, channelName: "room", payload: .string("x")))
        #expect(harness.outbox.messages(to: bob).isEmpty)
        await expectError(.channelNotSubscribed) {
            _ = try await harness.bus.request(Unsubscribe(session: bob, userId: "bob", channelName: "room"))
        }
        let left = await harness.recorder.waitFor(ChannelLeft.self)
        #expect(left.first?.reason == .left)
    }

    @Test func aClosedSessionLosesItsSubscriptions() async throws {
        let (harness, _) = await world()
        _ = try await harness.bus.request(Subscribe(session: bob, userId: "bob", channelName: "a"))
        _ = try await harness.bus.request(Subscribe(session: bob, userId: "bob", channelName: "b"))
        await harness.bus.publishAndWait(SessionClosed(session: bob, userId: "bob", reason: .timedOut))
        #expect(try await harness.bus.request(ChannelsOfSession(session: bob)).isEmpty)
        let left = await harness.recorder.waitFor(ChannelLeft.self, count: 2)
        #expect(left.map(\.channel.name) == ["a", "b"])
        #expect(left.allSatisfy { $0.reason == .sessionClosed(.timedOut) })
    }
}

@Suite struct MessageRouterRaceTests {
    @Test func aSubscribeThatArrivesAfterItsSessionEndedLeavesNothing() async throws {
        let harness = await ModuleHarness(modules: [FakeSessions(), MessageRouter()])
        await harness.bus.publishAndWait(SessionClosed(session: SessionID(9), userId: "gone", reason: .replacedBySameUser))
        do {
            _ = try await harness.bus.request(Subscribe(session: SessionID(9), userId: "gone", channelName: "room"))
            Issue.record("an ended session must not subscribe")
        } catch {
            #expect(error.code == .notLogin)
        }
        #expect(try await harness.bus.request(ChannelsOfSession(session: SessionID(9))).isEmpty)
    }

    @Test func aChannelHoldsAtMostUsersPerChannelSubscribers() async throws {
        var limits = Limits()
        limits.usersPerChannel = 2
        let harness = await ModuleHarness(limits: limits, modules: [FakeSessions(), MessageRouter()])
        for id in 1...2 {
            _ = try await harness.bus.request(Subscribe(session: SessionID(UInt64(id)), userId: "u\(id)", channelName: "room"))
        }
        do {
            _ = try await harness.bus.request(Subscribe(session: SessionID(3), userId: "u3", channelName: "room"))
            Issue.record("a full channel must refuse")
        } catch {
            #expect(error.code == .channelJoinFailed)
        }
        // Changing the features of an existing subscription is not a new subscriber.
        _ = try await harness.bus.request(Subscribe(session: SessionID(1), userId: "u1", channelName: "room", features: [.message]))
    }
}
