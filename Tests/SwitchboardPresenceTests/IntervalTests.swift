import Testing
import SwitchboardCore
import SwitchboardPresence
import SwitchboardTestKit

/// Interval mode on the manual clock, in milliseconds.
@Suite(.timeLimit(.minutes(2))) struct IntervalTests {
    let alice = PresenceWorld.caller("alice", 1)
    let room = ChannelAddress(.message, "room")

    func member(_ index: Int) -> Caller { PresenceWorld.caller("user\(index)", UInt64(100 + index)) }

    /// Limits with the smallest threshold and period the reference allows.
    static var small: Limits {
        var limits = Limits()
        limits.presence.intervalThreshold = 8
        limits.presence.interval = .seconds(5)
        return limits
    }

    func intervals(_ world: PresenceWorld) -> [PresenceIntervalInfo] {
        world.events(.interval, to: alice).compactMap(\.interval)
    }

    @Test func aboveTheThresholdChangesAreGatheredAndSentEachPeriod() async throws {
        let world = await PresenceWorld()
        await world.join(alice, "room")
        for index in 0..<49 { await world.join(member(index), "room", [.message]) }
        #expect(world.events(.remoteJoinChannel, to: alice).count == 49, "50 present: still real-time")
        for index in 49..<53 { await world.join(member(index), "room", [.message]) }
        await world.leave(member(3), "room")
        _ = try await world.request(SetPresenceState(caller: member(5), channel: room, items: [StateItem(key: "k", value: "v")]))
        await world.publish(SessionTimedOut(caller: member(6)))
        #expect(world.events(to: alice).count == 1 + 49, "nothing more in real time")

        await world.advance(by: .milliseconds(29_750))
        #expect(intervals(world).isEmpty)
        await world.advance(by: .milliseconds(250))
        let first = try #require(world.events(.interval, to: alice).first)
        #expect(first.publisher == "" && first.channelName == "room" && first.channelType == .message && !first.more)
        #expect(first.timestamp == world.harness.clock.wallMilliseconds)
        #expect(first.interval == PresenceIntervalInfo(
            joinUserList: ["user49", "user50", "user51", "user52"], leaveUserList: ["user3"], timeoutUserList: ["user6"],
            userStateList: [UserState(userId: "user5", states: ["k": "v"])], totalOccupancy: 52))
        #expect(world.events(.interval, to: member(5)).isEmpty, "members without presence hear nothing")

        await world.advance(by: .seconds(30))
        #expect(intervals(world).last == PresenceIntervalInfo(totalOccupancy: 52), "a quiet period still reports the occupancy")
        #expect(intervals(world).count == 2)
        await world.stop()
    }

    @Test func eachAppsChannelsFollowItsOwnThresholdAndPeriod() async throws {
        let world = await PresenceWorld()
        world.harness.context.limitsBook.replace(with: LimitsBook.Edition(apps: ["small": Self.small]))
        let small = PresenceWorld.caller("alice", 1000, app: "small")
        for app in ["small", PresenceWorld.app] {
            await world.join(PresenceWorld.caller("alice", app == "small" ? 1000 : 1, app: app), "room")
            for index in 0..<10 {
                await world.join(PresenceWorld.caller("user\(index)", UInt64(app == "small" ? 2000 + index : 100 + index), app: app), "room", [.message])
            }
        }
        // 11 present: from the 9th on, above small's threshold of 8, never the server's 50.
        #expect(world.events(.remoteJoinChannel, to: small).count == 7)
        #expect(world.events(.remoteJoinChannel, to: alice).count == 10)
        await world.advance(by: .seconds(5))
        #expect(world.events(.interval, to: small).first?.interval?.joinUserList == ["user7", "user8", "user9"])
        // small's period again, not the server's 30 s.
        await world.advance(by: .seconds(5))
        #expect(world.events(.interval, to: small).count == 2)
        #expect(world.events(.interval, to: alice).isEmpty)
        await world.stop()
    }

    @Test func aPeriodReportsTheNetChange() async throws {
        let world = await PresenceWorld(limits: Self.small)
        await world.join(alice, "room")
        for index in 0..<9 { await world.join(member(index), "room", [.message]) }
        await world.advance(by: .seconds(5))
        _ = try await world.request(SetPresenceState(caller: member(1), channel: room, items: [StateItem(key: "k", value: "v")]))
        await world.join(member(20), "room", [.message])
        await world.leave(member(20), "room")  // came and went: in neither list
        await world.leave(member(1), "room")  // left and came back: present, its state cleared
        await world.join(member(1), "room", [.message])
        await world.leave(member(2), "room")
        await world.advance(by: .seconds(5))
        #expect(intervals(world).last == PresenceIntervalInfo(
            leaveUserList: ["user2"], userStateList: [UserState(userId: "user1")], totalOccupancy: 9))
        await world.stop()
    }

    @Test func belowTheThresholdEventsAreRealTimeAgainAfterTheDebounce() async throws {
        let world = await PresenceWorld(limits: Self.small)
        await world.join(alice, "room")
        for index in 0..<8 { await world.join(member(index), "room", [.message]) }
        #expect(world.events(.remoteJoinChannel, to: alice).count == 7)
        await world.leave(member(0), "room")  // 8: at the threshold, but gathering until the debounce ends
        await world.advance(by: .milliseconds(1_000))
        await world.join(member(0), "room", [.message])  // 9 again: the debounce starts over
        await world.leave(member(1), "room")  // 8
        await world.advance(by: .milliseconds(1_750))
        await world.leave(member(2), "room")
        #expect(intervals(world).isEmpty && world.events(.remoteLeaveChannel, to: alice).isEmpty)
        await world.advance(by: .milliseconds(250))
        #expect(intervals(world) == [PresenceIntervalInfo(
            joinUserList: ["user7"], leaveUserList: ["user1", "user2"], userStateList: [UserState(userId: "user0")], totalOccupancy: 7)],
            "user0 left and came back: present, with its state as it now is")
        await world.leave(member(3), "room")
        #expect(world.events(.remoteLeaveChannel, to: alice).map(\.publisher) == ["user3"], "real-time again")
        await world.advance(by: .seconds(10))
        #expect(intervals(world).count == 1, "no more interval events")
        await world.stop()
    }

    @Test func aLargeIntervalEventComesInPartsThatEachFitAFrame() async throws {
        let world = await PresenceWorld(limits: Self.small)
        await world.join(alice, "room")
        for index in 0..<9 { await world.join(member(index), "room", [.message]) }
        let value = String(repeating: "x", count: 8 * 1024)
        for index in 0..<9 {
            _ = try await world.request(SetPresenceState(caller: member(index), channel: room, items: [StateItem(key: "k", value: value)]))
        }
        await world.advance(by: .seconds(5))
        let parts = world.events(.interval, to: alice)
        #expect(parts.count == 2)
        #expect(parts.map(\.more) == [true, false])
        #expect(parts.allSatisfy { $0.approximateSize < PresenceSize.partBudget + 1024 && $0.interval?.totalOccupancy == 10 })
        #expect(parts.flatMap { $0.interval?.userStateList ?? [] }.map(\.userId) == (0..<9).map { "user\($0)" })
        await world.stop()
    }

    @Test func aLargeSnapshotComesInPartsAndStopsAtTheSyncLimit() async throws {
        var limits = Self.small
        limits.presence.snapshotMaxUsers = 12
        let world = await PresenceWorld(limits: limits)
        let value = String(repeating: "x", count: 8 * 1024)
        for index in 0..<15 {
            await world.join(member(index), "room", [.message])
            _ = try await world.request(SetPresenceState(caller: member(index), channel: room, items: [StateItem(key: "k", value: value)]))
        }
        await world.join(alice, "room")
        let parts = world.events(.snapshot, to: alice)
        #expect(parts.count == 3)
        #expect(parts.map(\.more) == [true, true, false])
        #expect(parts.allSatisfy { $0.totalOccupancy == 16 && $0.approximateSize < PresenceSize.partBudget + 1024 })
        #expect(parts.flatMap(\.snapshot).map(\.userId) == (0..<12).map { "user\($0)" })
        await world.stop()
    }
}
