import Testing
import SwitchboardCore
import SwitchboardPresence
import SwitchboardTestKit

@Suite(.timeLimit(.minutes(2))) struct QueryTests {
    let room = ChannelAddress(.message, "room")

    func member(_ index: Int) -> Caller { PresenceWorld.caller("user\(index)", UInt64(100 + index)) }

    /// Every page from the first, following `nextPage`.
    func allPages(_ world: PresenceWorld, as asker: Caller, includeState: Bool = false) async throws -> [WhoNowPage] {
        var pages: [WhoNowPage] = []
        var token = ""
        repeat {
            let page = try await world.request(WhoNow(caller: asker, channel: room, includeState: includeState, page: token))
            pages.append(page)
            token = page.nextPage
        } while !token.isEmpty && pages.count < 1_000
        return pages
    }

    @Test(arguments: [false, true]) func pagingAChannelReturnsEveryMemberExactlyOnceInJoinOrder(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        for index in 0..<250 { await world.join(member(index), "room", [.message]) }
        let pages = try await allPages(world, as: member(0))
        #expect(pages.map(\.users.count) == [100, 100, 50])
        #expect(pages.map(\.totalOccupancy) == [100, 100, 50], "the reference's totalOccupancy: the length of the list")
        #expect(pages.flatMap(\.users).map(\.userId) == (0..<250).map { "user\($0)" })
        await world.stop()
    }

    @Test(arguments: [false, true]) func membersWhoStayAreNeitherSkippedNorRepeatedWhileOthersComeAndGo(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        for index in 0..<300 { await world.join(member(index), "room", [.message]) }
        let first = try await world.request(WhoNow(caller: member(0), channel: room))
        // Most of the channel leaves (the roster compacts its gaps meanwhile); newcomers arrive.
        for index in stride(from: 0, to: 300, by: 2) { await world.leave(member(index), "room") }
        for index in stride(from: 101, to: 200, by: 2) { await world.leave(member(index), "room") }
        for index in 300..<340 { await world.join(member(index), "room", [.message]) }
        var seen = first.users.map(\.userId)
        var token = first.nextPage
        while !token.isEmpty {
            let page = try await world.request(WhoNow(caller: member(1), channel: room, page: token))
            seen += page.users.map(\.userId)
            token = page.nextPage
        }
        let stayers = stride(from: 201, to: 300, by: 2).map { "user\($0)" }
        let newcomers = (300..<340).map { "user\($0)" }
        #expect(Array(seen.dropFirst(100)) == stayers + newcomers)
        #expect(Set(seen).count == seen.count)
        await world.stop()
    }

    @Test(arguments: [false, true]) func pagesStayWithinOneFrameWhenStatesAreLarge(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        let value = String(repeating: "s", count: 8 * 1024)
        for index in 0..<20 {
            await world.join(member(index), "room", [.message])
            _ = try await world.request(SetPresenceState(caller: member(index), channel: room, items: [StateItem(key: "a", value: value)]))
        }
        let pages = try await allPages(world, as: member(0), includeState: true)
        #expect(pages.count > 1)
        #expect(pages.allSatisfy { $0.users.reduce(0) { $0 + $1.approximateSize } <= PresenceSize.partBudget })
        #expect(pages.flatMap(\.users).map(\.userId) == (0..<20).map { "user\($0)" })
        #expect(pages.flatMap(\.users).allSatisfy { $0.states == ["a": value] })
        await world.stop()
    }

    @Test(arguments: [false, true]) func whoNowAsksForIdsStatesOrOnlyTheCount(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        for index in 0..<3 { await world.join(member(index), "room", [.message]) }
        _ = try await world.request(SetPresenceState(caller: member(1), channel: room, items: [StateItem(key: "k", value: "v")]))
        let ids = try await world.request(WhoNow(caller: member(0), channel: room))
        #expect(ids.users == [UserState(userId: "user0"), UserState(userId: "user1"), UserState(userId: "user2")])
        let states = try await world.request(WhoNow(caller: member(0), channel: room, includeState: true))
        #expect(states.users[1] == UserState(userId: "user1", states: ["k": "v"]))
        let count = try await world.request(WhoNow(caller: member(0), channel: room, includeUserId: false, includeState: false))
        #expect(count == WhoNowPage(totalOccupancy: 3, users: [], nextPage: ""))
        let anonymous = try await world.request(WhoNow(caller: member(0), channel: room, includeUserId: false, includeState: true))
        #expect(anonymous.users.map(\.userId) == ["", "", ""] && anonymous.users[1].states == ["k": "v"])
        let empty = try await world.request(WhoNow(caller: member(0), channel: ChannelAddress(.stream, "nowhere")))
        #expect(empty == WhoNowPage(totalOccupancy: 0, users: [], nextPage: ""))
        await expectError(.presenceInvalidArgument) {
            _ = try await world.request(WhoNow(caller: member(0), channel: room, page: "not-a-page"))
        }
        await expectError(.invalidChannelType) {
            _ = try await world.request(WhoNow(caller: member(0), channel: ChannelAddress(.user, "user1")))
        }
        await world.stop()
    }

    @Test(arguments: [false, true]) func whereNowListsTheVisibleChannelsOfBothTypes(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        let alice = PresenceWorld.caller("alice", 1)
        await world.join(alice, "b-room")
        await world.join(alice, "a-room")
        await world.join(alice, "stage", type: .stream)
        await world.join(alice, "secret", [.message, .beQuiet])
        #expect(try await world.request(WhereNow(caller: member(0), userId: "alice"))
            == [ChannelAddress(.message, "a-room"), ChannelAddress(.message, "b-room"), ChannelAddress(.stream, "stage")])
        #expect(try await world.request(WhereNow(caller: member(0), userId: "nobody")).isEmpty)
        await expectError(.invalidUserId) { _ = try await world.request(WhereNow(caller: member(0), userId: "")) }
        await world.stop()
    }

    @Test(arguments: [false, true]) func userPresenceFollowsSessionsAcrossDevicesWithLastSeen(suspendingStore: Bool) async throws {
        let world = await PresenceWorld(suspendingStore: suspendingStore)
        let clock = world.harness.clock
        let phone = PresenceWorld.caller("bob", 20)
        let laptop = PresenceWorld.caller("bob", 21)
        let asker = PresenceWorld.caller("alice", 1)
        func ask() async throws -> UserPresence {
            try #require(try await world.request(GetUserPresence(caller: asker, userIds: ["bob"])).first)
        }
        #expect(try await ask() == UserPresence(userId: "bob", online: false, lastSeen: 0))
        await world.publish(SessionOpened(caller: phone))
        await world.publish(SessionOpened(caller: laptop))
        #expect(try await ask() == UserPresence(userId: "bob", online: true, lastSeen: clock.wallMilliseconds))
        await world.publish(SessionClosed(caller: phone, reason: .logout))
        await world.advance(by: .milliseconds(1500))
        #expect(try await ask() == UserPresence(userId: "bob", online: true, lastSeen: clock.wallMilliseconds), "the laptop is still on")
        let lostAt = clock.wallMilliseconds
        await world.publish(SessionSuspended(caller: laptop))
        await world.advance(by: .seconds(10))
        #expect(try await ask() == UserPresence(userId: "bob", online: true, lastSeen: lostAt), "waiting for a resume is online")
        await world.publish(SessionTimedOut(caller: laptop))
        await world.publish(SessionClosed(caller: laptop, reason: .timedOut))
        let endedAt = clock.wallMilliseconds
        await world.advance(by: .seconds(60))
        #expect(try await ask() == UserPresence(userId: "bob", online: false, lastSeen: endedAt))
        let other = PresenceWorld.caller("bob", 30, app: "other")
        #expect(try await world.request(GetUserPresence(caller: other, userIds: ["bob"])).first?.lastSeen == 0, "apps never meet")
        await expectError(.presenceInvalidArgument) {
            _ = try await world.request(GetUserPresence(caller: asker, userIds: (0...100).map { "u\($0)" }))
        }
        await expectError(.invalidUserId) { _ = try await world.request(GetUserPresence(caller: asker, userIds: ["ok", ""])) }
        await world.stop()
    }
}
