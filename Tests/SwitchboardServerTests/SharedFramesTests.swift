import Testing
import SwitchboardCore
import SwitchboardTestKit
import SwitchboardTransport
import SwitchboardWire
@testable import SwitchboardServer

/// A fan-out's one frame, kept by every receiver's history through one count in `SharedFrames`.
@Suite(.timeLimit(.minutes(5))) struct SharedFramesTests {
    final class Frame: Sendable {
        let number: Int
        init(_ number: Int) { self.number = number }
    }

    @Test func aFrameLivesUntilItsLastHolderLetsGoAndItsSlotIsUsedAgain() {
        let table = SharedFrames<Frame>()
        weak var watched: Frame?
        var index: Int32 = 0
        do {
            let frame = Frame(1)
            watched = frame
            index = table.add(frame)
        }
        // Two histories hold it; the first forgets it before the fan-out is done.
        table.hold(index)
        table.letGo(index)
        table.hold(index)
        table.letGo(index)
        #expect(table.count == 1)
        #expect(table[index].number == 1)
        #expect(watched != nil)
        table.letGo(index)
        #expect(watched == nil)
        #expect(table.count == 0)
        // Nobody held the next one: it goes with the fan-out's own hold, and the freed slot is
        // taken again.
        let unheld = table.add(Frame(2))
        #expect(unheld == index)
        table.letGo(unheld)
        #expect(table.count == 0)
    }

    @Test func growingKeepsEveryFrameAndAnEmptiedLargeTableStartsSmallAgain() {
        let table = SharedFrames<Frame>()
        let indices = (0..<3_000).map { number in
            table.add(Frame(number))
        }
        #expect(table.count == 3_000)
        #expect(indices.enumerated().allSatisfy { table[$0.element].number == $0.offset })
        for index in indices { table.letGo(index) }
        #expect(table.count == 0)
        #expect(table.add(Frame(7)) == 0)
    }

    /// Three histories share one table; each is checked step by step against its own model (the
    /// one `PushHistoryModelTests` uses), and the table keeps every shared frame some history still
    /// keeps, and at most the ones each history stores past its frame bound (under a batch) more.
    @Test(arguments: [1, 2, 3, 4])
    func historiesSharingATableMatchTheirModels(seed: UInt64) async {
        typealias Model = PushHistoryModelTests.Model
        var random = SeededGenerator(seed: seed)
        func next(_ bound: Int) -> Int { random.next(below: bound) }
        let table = SharedFrames<[UInt8]>()
        let channels: [ChannelAddress?] = [nil, ChannelAddress(.message, "a"), ChannelAddress(.user, "b")]
        func randomBounds() -> PushHistory<[UInt8]>.Bounds {
            .init(frames: [0, 1, 3, 16, 128][next(5)], bytes: [0, 100, 5_000, 1 << 20][next(4)])
        }
        var histories: [PushHistory<[UInt8]>] = []
        var models: [Model] = []
        for _ in 0..<3 {
            let bounds = randomBounds()
            histories.append(PushHistory(bounds: bounds, sharedFrames: table))
            models.append(Model(bounds: bounds))
        }
        var failures = 0
        var fanOuts: UInt32 = 0
        for step in 0..<10_000 {
            await SharedExecutor.yield(atStep: step, every: 1_000)
            let op = next(100)
            let who = next(3)
            if op < 45 {
                // A fan-out to a random set of the three, its bytes marked as a fan-out's and unique.
                fanOuts += 1
                let bytes = [0xFA] + withUnsafeBytes(of: fanOuts) { Array($0) } + random.bytes(count: next(40))
                let size = next(300)
                let channel = channels[next(channels.count)]
                let index = table.add([0xFF] + bytes)
                for receiver in 0..<3 where next(3) > 0 {
                    histories[receiver].record(shared: index, size: size, channel: channel)
                    models[receiver].record(bytes, size: size, channel: channel, copy: false)
                }
                table.letGo(index)
            } else if op < 65 {
                let bytes = [0x00] + random.bytes(count: next(40))
                let size = next(300)
                histories[who].record([0xFF] + bytes, size: size, channel: nil)
                models[who].record(bytes, size: size, channel: nil, copy: false)
            } else if op < 72 {
                let bounds = randomBounds()
                histories[who].rebound(bounds)
                models[who].bounds = bounds
                models[who].trim()
            } else if op < 80 {
                _ = histories[who].forgetOldestPush()
                if !models[who].kept.isEmpty { models[who].forgetOldest() }
            } else if op < 82 {
                // The session ends; another takes its place.
                histories[who].letGoOfSharedFrames()
                let bounds = randomBounds()
                histories[who] = PushHistory(bounds: bounds, sharedFrames: table)
                models[who] = Model(bounds: bounds)
            } else {
                let received = UInt64(next(Int(models[who].sent) + 2))
                let got = histories[who].unreceived(after: received) { [0xCC] + Array($0) }
                let want = models[who].unreceived(after: received)
                if got.frames != want.frames || got.loss != want.loss {
                    failures += 1
                    Issue.record("step \(step): history \(who) replays \(got.frames.count), the model \(want.frames.count)")
                }
            }
            // A fan-out's frame is kept once while any history keeps it, and let go of at the
            // latest with the batch of pushes past the frame bound it is forgotten with.
            let kept = Set(models.flatMap { model in model.kept.filter { $0.bytes.first == 0xFA }.map(\.bytes) }).count
            let mostPastTheBound = 3 * (PushHistory<[UInt8]>.forgetBatch - 1)
            if table.count < kept || table.count > kept + mostPastTheBound {
                failures += 1
                Issue.record("step \(step): the table keeps \(table.count) frames, the histories \(kept)")
            }
            if failures > 5 { return }
        }
        for index in histories.indices { histories[index].letGoOfSharedFrames() }
        #expect(table.count == 0)
    }
}

/// The registry keeps a fan-out's frame once for all its receivers' histories: a resume gets it
/// again like any other push, and it is freed once no history keeps it.
@Suite(.timeLimit(.minutes(1))) struct SharedFanOutRegistryTests {
    private func push(_ number: Int) -> Push {
        .message(MessageDelivery(
            channelType: .message, channelName: "room", payload: .string("m\(number)"), publisher: "p", customType: "",
            timestamp: 0))
    }

    private func texts(_ frames: [ServerFrame]) -> [String] {
        frames.compactMap { frame in
            guard case .push(.message(let delivery)) = frame, case .string(let text) = delivery.payload else { return nil }
            return text
        }
    }

    @Test func aFanOutIsReplayedOnResumeAndFreedWithTheLastHistoryKeepingIt() throws {
        var limits = Limits()
        limits.sessions.resumeReplayMaxMessages = 8
        let registry = SessionRegistry<RecordingConnection>(limits: limits)
        let sessions = (1...3).map { SessionID(UInt64($0)) }
        let attacher = Attacher(registry: registry, limits: limits)
        func attach(_ session: SessionID, received: UInt64) throws -> (RecordingConnection, ClientLink<RecordingConnection>) {
            try attacher.attach(session, received: received)
        }
        var links: [(RecordingConnection, ClientLink<RecordingConnection>)] = []
        for session in sessions {
            registry.open(session)
            links.append(try attach(session, received: 0))
        }
        for number in 0..<5 { registry.deliver(push(number), to: sessions) }
        registry.deliver(push(5), to: Array(sessions.prefix(2)))
        #expect(registry.sharedFrameCount == 6)
        #expect(texts(links[0].0.frames) == (0..<6).map { "m\($0)" })
        #expect(texts(links[2].0.frames) == (0..<5).map { "m\($0)" })

        // The first session's connection dies after its client read two pushes; it resumes.
        registry.closed(links[0].1)
        let (resumed, _) = try attach(sessions[0], received: 2)
        #expect(texts(resumed.frames) == (2..<6).map { "m\($0)" })

        // Past the live bound each history forgets its oldest: the table keeps the last eight,
        // and fewer than a batch more that the histories forget together.
        for number in 6..<100 { registry.deliver(push(number), to: sessions) }
        #expect(registry.sharedFrameCount >= 8 && registry.sharedFrameCount < 8 + PushHistory<OutboundFrame>.forgetBatch)
        // A resume gets the eight kept, not the ones past the bound still stored.
        registry.closed(links[1].1)
        let (replayed, _) = try attach(sessions[1], received: 80)
        #expect(texts(replayed.frames) == (92..<100).map { "m\($0)" })
        for session in sessions { registry.release(session) }
        #expect(registry.sharedFrameCount == 0)
    }

    @Test func aLentMessageReachesItsSessionAndItsResumeAsTheOwnedOneDoes() throws {
        let limits = Limits()
        let registry = SessionRegistry<RecordingConnection>(limits: limits)
        let attacher = Attacher(registry: registry, limits: limits)
        func attach(_ session: SessionID, received: UInt64) throws -> (RecordingConnection, ClientLink<RecordingConnection>) {
            try attacher.attach(session, received: received)
        }
        // Small (copied into the batch), large (a frame of its own), text and bytes, custom types.
        let messages: [(payload: [UInt8], isString: Bool, customType: String)] = [
            (Array("hello".utf8), true, ""), ([0, 1, 255], false, "kind"), (Array(repeating: 0x61, count: 40_000), true, "big"),
            (Array(repeating: 9, count: 70_000), false, ""), (Array("é🙂".utf8), true, String(repeating: "é", count: 20)),
        ]
        func deliver(_ index: Int, lent lentSession: SessionID, owned ownedSession: SessionID) {
            let message = messages[index]
            message.payload.withUnsafeBytes { payload in
                Array(message.customType.utf8).withUnsafeBytes { customType in
                    let lent = LentMessage(
                        channelType: .user, channelName: "alice", payload: payload, payloadIsString: message.isString,
                        publisher: "alice", customType: customType, timestamp: 1_700_000_000_000 + UInt64(index))
                    registry.deliver(lent, to: lentSession)
                    registry.deliver(.message(lent.owned()), to: ownedSession)
                }
            }
        }
        let lentSession = SessionID(1), ownedSession = SessionID(2)
        registry.open(lentSession)
        registry.open(ownedSession)
        let (lentConnection, lentLink) = try attach(lentSession, received: 0)
        let (ownedConnection, ownedLink) = try attach(ownedSession, received: 0)
        for index in messages.indices { deliver(index, lent: lentSession, owned: ownedSession) }
        #expect(lentConnection.sentBytes.count == 1 + messages.count)
        #expect(lentConnection.sentBytes == ownedConnection.sentBytes)
        let payloads = lentConnection.frames.compactMap(\.deliveredMessage).map(\.payload)
        #expect(payloads == messages.map { $0.isString ? .string(String(decoding: $0.payload, as: UTF8.self)) : .binary($0.payload) })

        // Detached, both are kept; each resumes having read two pushes and gets the rest alike.
        registry.closed(lentLink)
        registry.closed(ownedLink)
        for index in messages.indices.reversed() { deliver(index, lent: lentSession, owned: ownedSession) }
        let (lentResumed, _) = try attach(lentSession, received: 2)
        let (ownedResumed, _) = try attach(ownedSession, received: 2)
        // (The detached bounds keep fewer bytes than the two large ones take: each forgets alike.)
        #expect(lentResumed.sentBytes.count > 1 + messages.count)
        #expect(lentResumed.sentBytes == ownedResumed.sentBytes)
        registry.release(lentSession)
        registry.release(ownedSession)
    }
}

extension SharedFanOutRegistryTests {
    @Test func aLentMessageToSeveralSessionsIsTheOwnedOnesFanOut() throws {
        let limits = Limits()
        let registry = SessionRegistry<RecordingConnection>(limits: limits)
        let attacher = Attacher(registry: registry, limits: limits)
        let lentSessions = [SessionID(1), SessionID(2)], ownedSessions = [SessionID(3), SessionID(4)]
        var connections: [SessionID: RecordingConnection] = [:]
        for session in lentSessions + ownedSessions {
            registry.open(session)
            connections[session] = try attacher.attach(session, received: 0).0
        }
        for (index, text) in ["one", String(repeating: "x", count: 40_000), "three"].enumerated() {
            Array(text.utf8).withUnsafeBytes { payload in
                Array("kind".utf8).withUnsafeBytes { customType in
                    let lent = LentMessage(
                        channelType: .message, channelName: "room", payload: payload, payloadIsString: true, publisher: "alice",
                        customType: customType, timestamp: 1_700_000_000_000 + UInt64(index))
                    registry.deliver(lent, to: lentSessions)
                    registry.deliver(.message(lent.owned()), to: ownedSessions)
                }
            }
        }
        let sent = (lentSessions + ownedSessions).map { connections[$0]?.sentBytes ?? [] }
        #expect(sent[0].count == 4)
        #expect(sent.allSatisfy { $0 == sent[0] })
        for session in lentSessions + ownedSessions { registry.release(session) }
    }
}

extension SharedFanOutRegistryTests {
    /// A publishing connection's memo (`OutboxMemo`) finds its receiver's outlet without a lookup,
    /// and is not trusted for another session, nor once a session was opened or released.
    @Test func aPublishersMemoReachesItsReceiverOnlyWhileNoSessionOpensOrEnds() throws {
        let limits = Limits()
        let registry = SessionRegistry<RecordingConnection>(limits: limits)
        let attacher = Attacher(registry: registry, limits: limits)
        let bob = SessionID(1), carol = SessionID(2), dave = SessionID(3)
        registry.open(bob)
        registry.open(carol)
        let bobConnection = try attacher.attach(bob, received: 0).0
        let carolConnection = try attacher.attach(carol, received: 0).0
        var memo = OutboxMemo()
        func send(_ text: String, to session: SessionID) {
            Array(text.utf8).withUnsafeBytes { payload in
                let message = LentMessage(
                    channelType: .user, channelName: "alice", payload: payload, payloadIsString: true, publisher: "alice",
                    customType: UnsafeRawBufferPointer(start: nil, count: 0), timestamp: 1_700_000_000_000)
                registry.deliver(message, to: session, memo: &memo)
            }
        }
        send("1", to: bob)
        #expect(memo.session == bob && memo.generation != 0)
        send("2", to: carol)
        #expect(memo.session == carol)
        registry.open(dave)
        send("3", to: carol)
        // Carol's outlet is freed with her session: the memo that named it is not followed.
        registry.release(carol)
        send("4", to: carol)
        send("5", to: bob)
        #expect(texts(bobConnection.frames) == ["1", "5"])
        #expect(texts(carolConnection.frames) == ["2", "3"])
        registry.release(bob)
        registry.release(dave)
    }
}

/// Binds sessions of a registry to new in-memory connections, as a login or a resume does.
final class Attacher {
    let registry: SessionRegistry<RecordingConnection>
    let limiter: CallRateLimiter
    private var nextConnection: UInt64 = 0

    init(registry: SessionRegistry<RecordingConnection>, limits: Limits) {
        self.registry = registry
        limiter = CallRateLimiter(limits: limits)
    }

    /// `session` on a new connection, its client having received `received` pushes (0: a login).
    func attach(_ session: SessionID, received: UInt64) throws -> (RecordingConnection, ClientLink<RecordingConnection>) {
        nextConnection += 1
        let connection = RecordingConnection(id: nextConnection)
        let link = ClientLink(socket: connection, limiter: limiter)
        registry.opened(link)
        let grant = LoginGranted(
            caller: Caller(app: "a", userId: "u\(session.rawValue)", session: session),
            ticket: ResumeTicket(session: session, secret: "s"), resumed: received > 0, heartbeatInterval: 5,
            presenceTimeout: 30)
        _ = try registry.bind(grant, to: link, received: received) { _ in .closing(reason: .unknown, detail: "answer") }
        return (connection, link)
    }
}
