import SwitchboardTestKit
import Foundation
import Synchronization
import Testing
@testable import SwitchboardTransport

@Suite(.timeLimit(.minutes(1))) struct EventLoopTests {
    @Test func executeRunsOnTheLoopThreadInOrder() async throws {
        let group = try EventLoopGroup(threads: 2)
        defer { group.shutdown() }
        let loop = group.next()
        #expect(!loop.inEventLoop)
        let seen = Mutex<[Int]>([])
        let onLoop = Atomic<Int>(0)
        for index in 0..<1000 {
            loop.execute {
                if loop.inEventLoop { onLoop.add(1, ordering: .relaxed) }
                seen.withLock { $0.append(index) }
            }
        }
        #expect(await eventually { seen.withLock { $0.count } == 1000 })
        #expect(seen.withLock { $0 } == Array(0..<1000))
        #expect(onLoop.load(ordering: .relaxed) == 1000)
    }

    @Test func workQueuedFromAnotherLoopWakesItOnceThatLoopsPassEnds() async throws {
        let group = try EventLoopGroup(threads: 2)
        defer { group.shutdown() }
        let (sender, target) = (group.loops[0], group.loops[1])
        let ran = Atomic<Int>(0)
        let wakesDuringPass = Mutex<Int?>(nil)
        let before = target.wakeupCount
        sender.execute {
            for _ in 0..<100 { target.execute { ran.add(1, ordering: .relaxed) } }
            wakesDuringPass.withLock { $0 = target.wakeupCount - before }
        }
        #expect(await eventually { ran.load(ordering: .relaxed) == 100 })
        #expect(wakesDuringPass.withLock { $0 } == 0)
        #expect(target.wakeupCount - before == 1)
    }

    @Test func roundRobinOverLoops() throws {
        let group = try EventLoopGroup(threads: 3)
        defer { group.shutdown() }
        let picked = (0..<6).map { _ in ObjectIdentifier(group.next()) }
        #expect(picked[0] != picked[1] && picked[1] != picked[2] && picked[0] == picked[3])
    }

    @Test func timersFireInDeadlineOrderAndCancel() async throws {
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        let loop = group.next()
        let fired = Mutex<[String]>([])
        loop.execute {
            loop.schedule(after: .milliseconds(30)) { fired.withLock { $0.append("late") } }
            loop.schedule(after: .milliseconds(5)) { fired.withLock { $0.append("early") } }
            let cancelled = loop.schedule(after: .milliseconds(10)) { fired.withLock { $0.append("cancelled") } }
            loop.cancelTimer(cancelled)
        }
        // "late" (30 ms) fires after the cancelled timer's time (10 ms) had come: no sleep needed.
        #expect(await eventually { fired.withLock { $0.contains("late") } })
        #expect(fired.withLock { $0 } == ["early", "late"])
    }

    @Test func shutdownJoinsAndDropsLaterWork() async throws {
        let group = try EventLoopGroup(threads: 2)
        group.shutdown()
        group.shutdown()
        #expect(group.isShuttingDown)
        #expect(!group.next().submit {})
        await #expect(throws: WebSocketClientError.shutDown) {
            _ = try await WebSocketClient.connect(to: "ws://127.0.0.1:1/", group: group, handler: RecordingHandler())
        }
        let server = WebSocketServer(group: group, handler: RecordingHandler())
        #expect(throws: SocketError.self) { try server.start() }
    }

    @Test func shutdownClosesOpenConnections() async throws {
        let serverGroup = try EventLoopGroup(threads: 1)
        let clientGroup = try EventLoopGroup(threads: 1)
        defer { clientGroup.shutdown() }
        let serverHandler = RecordingHandler()
        let server = WebSocketServer(group: serverGroup, handler: serverHandler)
        let port = try server.start()
        let client = RecordingHandler()
        _ = try await WebSocketClient.connect(to: "ws://127.0.0.1:\(port)/", group: clientGroup, handler: client)
        #expect(await serverHandler.wait { $0.opened.count == 1 })
        serverGroup.shutdown()
        #expect(serverHandler.closed.count == 1)
        #expect(await client.wait { $0.closed.count == 1 })
        #expect(client.closed.first?.code == nil)
    }

    @Test func timerHeapOrdersAndCancels() {
        var timers = LoopTimers()
        var fired: [Int] = []
        let log = { (index: Int) in { fired.append(index) } }
        _ = timers.schedule(after: .seconds(3600), log(-1))
        var ids: [UInt64] = []
        for index in 0..<200 {
            ids.append(timers.schedule(after: .zero, log(index)))
        }
        for index in stride(from: 0, to: 200, by: 3) { timers.cancel(ids[index]) }
        timers.cancel(ids[0])
        #expect(timers.count == 1 + 200 - 67)
        #expect(timers.timeoutMilliseconds() == 0)
        for action in timers.due() { action() }
        #expect(fired == (0..<200).filter { $0 % 3 != 0 })
        #expect(timers.count == 1)
        #expect(timers.timeoutMilliseconds() > 3_000)
        #expect(timers.due().isEmpty)
    }
}
