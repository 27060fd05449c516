import Testing
import SwitchboardCore
import SwitchboardTransport
import SwitchboardWire

@testable import SwitchboardServer

/// Fan-outs delivered during a socket read are held for its end and then reach each receiver
/// together, as one send: in the order they were delivered, behind nothing and before anything
/// the registry does next, numbered one by one for a resume.
@Suite(.timeLimit(.minutes(1))) struct HeldFanOutTests {
    private func push(_ number: Int, channel: String = "room") -> Push {
        .message(MessageDelivery(
            channelType: .message, channelName: channel, payload: .string("m\(number)"), publisher: "p", customType: "",
            timestamp: 0))
    }

    private func texts(_ connection: RecordingConnection) -> [String] {
        connection.frames.compactMap { frame in
            guard case .push(.message(let delivery)) = frame, case .string(let text) = delivery.payload else { return nil }
            return text
        }
    }

    /// A registry with `count` sessions, each attached to its own connection.
    private func attached(
        _ count: Int, limits: Limits = Limits()
    ) throws -> (SessionRegistry<RecordingConnection>, Attacher, [SessionID], [(RecordingConnection, ClientLink<RecordingConnection>)]) {
        let registry = SessionRegistry<RecordingConnection>(limits: limits)
        let attacher = Attacher(registry: registry, limits: limits)
        let sessions = (1...count).map { SessionID(UInt64($0)) }
        var links: [(RecordingConnection, ClientLink<RecordingConnection>)] = []
        for session in sessions {
            registry.open(session)
            links.append(try attacher.attach(session, received: 0))
        }
        return (registry, attacher, sessions, links)
    }

    @Test func aReadsFanOutsReachEachReceiverAsOneSendWhenTheReadEnds() throws {
        var limits = Limits()
        limits.sessions.resumeReplayMaxMessages = 8
        let (registry, attacher, sessions, links) = try attached(3, limits: limits)
        // The third session's connection is gone: it keeps what it misses for its resume.
        registry.closed(links[2].1)
        let sendsBefore = links.map { $0.0.sends }

        ReadScope.enter()
        for number in 0..<5 { registry.deliver(push(number), to: sessions) }
        #expect(links.allSatisfy { texts($0.0).isEmpty })
        registry.readEnded()
        #expect(!ReadScope.isOpen)

        for (connection, _) in links.prefix(2) { #expect(texts(connection) == (0..<5).map { "m\($0)" }) }
        #expect(links.map { $0.0.sends } == [sendsBefore[0] + 1, sendsBefore[1] + 1, sendsBefore[2]])
        #expect(registry.sharedFrameCount == 5)

        // Each push was numbered on its own: a client that read two resumes with the other three,
        // and the detached one gets all five.
        registry.closed(links[0].1)
        let (resumed, _) = try attacher.attach(sessions[0], received: 2)
        #expect(texts(resumed) == (2..<5).map { "m\($0)" })
        let (returned, _) = try attacher.attach(sessions[2], received: 0)
        #expect(texts(returned) == (0..<5).map { "m\($0)" })
        for session in sessions { registry.release(session) }
        #expect(registry.sharedFrameCount == 0)
    }

    @Test func anythingElseTheRegistryDoesHandsTheHeldPushesOverFirst() throws {
        let (registry, _, sessions, links) = try attached(3)
        ReadScope.enter()
        registry.deliver(push(0), to: sessions)
        registry.deliver(push(1), to: sessions)
        // A push to one of the receivers alone follows the two.
        registry.deliver(push(2, channel: "alone"), to: sessions[0])
        registry.deliver(push(3), to: sessions)
        // A fan-out to another list: the one held before it is handed over first.
        let pair = Array(sessions.prefix(2))
        registry.deliver(push(4), to: pair)
        registry.deliver(push(5), to: pair)
        // A priority push is never held, and follows the held ones.
        registry.deliver(push(6), to: pair, priority: .high)
        registry.deliver(push(7), to: sessions)
        registry.release(sessions[1])
        registry.deliver(push(8), to: sessions)
        registry.readEnded()

        #expect(texts(links[0].0) == (0...8).map { "m\($0)" })
        #expect(texts(links[1].0) == (0...7).filter { $0 != 2 }.map { "m\($0)" })
        #expect(texts(links[2].0) == ["m0", "m1", "m3", "m7", "m8"])
        registry.release(sessions[0])
        registry.release(sessions[2])
        #expect(registry.sharedFrameCount == 0)
    }

    @Test func aResumeNamesTheChannelsOfHeldPushesItLost() throws {
        var limits = Limits()
        limits.sessions.resumeReplayMaxMessages = 2
        let (registry, attacher, sessions, links) = try attached(2, limits: limits)
        // The history knows a channel by a slot: a push of the channel of the one before it
        // takes that one's slot, any other its own.
        let channels = ["a", "a", "b", "b", "c", "a", "a"]
        ReadScope.enter()
        for (number, channel) in channels.enumerated() { registry.deliver(push(number, channel: channel), to: sessions) }
        registry.readEnded()
        #expect(texts(links[0].0) == channels.indices.map { "m\($0)" })

        registry.closed(links[0].1)
        let link = ClientLink(socket: RecordingConnection(id: 99), limiter: attacher.limiter)
        registry.opened(link)
        var loss = ResumeLoss.none
        let grant = LoginGranted(
            caller: Caller(app: "a", userId: "u1", session: sessions[0]), ticket: ResumeTicket(session: sessions[0], secret: "s"),
            resumed: true, heartbeatInterval: 5, presenceTimeout: 30)
        _ = try registry.bind(grant, to: link, received: 1) { lost in
            loss = lost
            return .closing(reason: .unknown, detail: "answer")
        }
        // Kept: the last two. Lost: m1 to m4, of channels a, b and c in that order.
        #expect(texts(link.socket) == ["m5", "m6"])
        #expect(loss.droppedPushes == 4)
        #expect(loss.channels == ["a", "b", "c"].map { ChannelAddress(.message, $0) })
        for session in sessions { registry.release(session) }
    }

    @Test func aLongReadHandsItsPushesOverInParts() throws {
        let (registry, _, sessions, links) = try attached(2)
        let sendsBefore = links[0].0.sends
        ReadScope.enter()
        for number in 0..<300 { registry.deliver(push(number), to: sessions) }
        registry.readEnded()
        for (connection, _) in links { #expect(texts(connection) == (0..<300).map { "m\($0)" }) }
        #expect(links[0].0.sends == sendsBefore + 2)
        for session in sessions { registry.release(session) }
    }

    @Test func withoutAReadAFanOutLeavesAtOnce() throws {
        let (registry, _, sessions, links) = try attached(2)
        #expect(!ReadScope.isOpen)
        registry.deliver(push(0), to: sessions)
        #expect(texts(links[1].0) == ["m0"])
        // A read that held nothing ends without handing anything over.
        ReadScope.enter()
        registry.deliver(push(1), to: sessions[0])
        #expect(texts(links[0].0) == ["m0", "m1"])
        registry.readEnded()
        #expect(!ReadScope.isOpen)
        for session in sessions { registry.release(session) }
    }
}
