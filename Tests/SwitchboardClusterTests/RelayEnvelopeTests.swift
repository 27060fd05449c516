import Testing
import SwitchboardCore
import SwitchboardWire

@testable import SwitchboardCluster

@Suite(.timeLimit(.minutes(1))) struct RelayEnvelopeTests {
    let deliveries = [
        MessageDelivery(
            channelType: .message, channelName: "room", payload: .string("hé 👋"), publisher: "alice", customType: "t",
            timestamp: 1_700_000_000_123),
        MessageDelivery(
            channelType: .user, channelName: "alice", payload: .binary([0, 1, 255]), publisher: "alice", customType: "",
            timestamp: 0),
        MessageDelivery(
            channelType: .message, channelName: "", payload: .binary([]), publisher: "", customType: "", timestamp: .max),
    ]

    @Test func envelopesComeBackAsTheyWent() throws {
        for delivery in deliveries {
            for target in [RelayTarget.channel(ChannelKey(app: "a:{p}", .message, "r%m")), .user(UserKey("app", "bob"))] {
                let envelope = RelayEnvelope(origin: "node-1", target: target, delivery: delivery)
                #expect(try RelayEnvelope(decoding: envelope.encoded()) == envelope)
            }
        }
    }

    @Test func everyCutEnvelopeAndOtherBytesAreRefusedWithoutACrash() {
        let bytes = RelayEnvelope(
            origin: "n", target: .user(UserKey("app", "bob")), delivery: deliveries[0]
        ).encoded()
        for cut in 0..<bytes.count {
            #expect(throws: WireError.self) { try RelayEnvelope(decoding: Array(bytes[..<cut])) }
        }
        #expect(throws: WireError.self) { try RelayEnvelope(decoding: bytes + [0]) }
        var generator = SystemRandomNumberGenerator()
        var decoded = 0
        for _ in 0..<2_000 {
            var mutated = bytes
            mutated[Int.random(in: 0..<mutated.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            if (try? RelayEnvelope(decoding: mutated)) != nil { decoded += 1 }
        }
        // Some mutations land in a string or the payload and still decode; most break the layout.
        #expect(decoded < 2_000)
    }

    /// A claim announcement as the claim script writes it (Redis's `cmsgpack` packs a Lua array
    /// of strings and an integer the same way).
    func announcement(_ origin: String, _ app: String, _ user: String, _ generation: Int64) -> [UInt8] {
        var writer = MessagePackWriter()
        writer.writeArrayHeader(5)
        for text in ["claim", origin, app, user] { writer.writeString(text) }
        writer.writeInteger(generation)
        return writer.bytes
    }

    @Test func claimAnnouncementsAreReadAndNeverTakenForMessagesOrTheOtherWayRound() throws {
        let bytes = announcement("n:1", "a{p}", "bob 👋", 42)
        let claim = try #require(UserClaimAnnouncement(decoding: bytes))
        #expect(claim.origin == "n:1" && claim.user == UserKey("a{p}", "bob 👋") && claim.generation == 42)
        #expect(throws: WireError.self) { try RelayEnvelope(decoding: bytes) }
        let envelope = RelayEnvelope(origin: "n", target: .user(UserKey("app", "bob")), delivery: deliveries[0]).encoded()
        #expect(UserClaimAnnouncement(decoding: envelope) == nil)
        for cut in 0..<bytes.count { #expect(UserClaimAnnouncement(decoding: Array(bytes[..<cut])) == nil) }
        #expect(UserClaimAnnouncement(decoding: bytes + [0]) == nil)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var mutated = bytes
            mutated[Int.random(in: 0..<mutated.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            _ = UserClaimAnnouncement(decoding: mutated)
        }
    }

    @Test func eachTargetHasAChannelOfItsOwnUnderOneHashTag() {
        let targets: [RelayTarget] = [
            .channel(ChannelKey(app: "a:b", .message, "c")), .channel(ChannelKey(app: "a", .message, "b:c")),
            .channel(ChannelKey(app: "a", .message, "{x}")), .channel(ChannelKey(app: "a", .message, "%7Bx%7D")),
            .user(UserKey("a:b", "c")), .user(UserKey("a", "b:c")), .channel(ChannelKey(app: "a", .message, "b")),
            .user(UserKey("a", "b")),
        ]
        let names = targets.map { String(decoding: RelayChannels.channel(of: $0).name, as: UTF8.self) }
        #expect(Set(names).count == targets.count, "\(names)")
        for name in names {
            // One hash tag: the first `{` and the first `}` after it enclose the app and the name.
            let open = name.firstIndex(of: "{")
            let close = name.firstIndex(of: "}")
            #expect(open != nil && close != nil && name.filter { $0 == "{" || $0 == "}" }.count == 2, "\(name)")
            #expect(close.map { name.index(after: $0) == name.endIndex } == true, "\(name)")
        }
        #expect(names[6] == "sb:m:{a:b}")
        #expect(names[7] == "sb:u:{a:b}")
    }
}
