import SwitchboardTestKit
import Testing
import SwitchboardCore
import SwitchboardWire

@Suite("Frames on random input", .timeLimit(.minutes(2)))
struct FrameRobustnessTests {
    @Test("20,000 random inputs never crash")
    func randomBytes() async {
        var random = SeededGenerator(seed: 0x5157_4954_4348)
        var decoded = 0
        for round in 0..<20_000 {
            await SharedExecutor.yield(atStep: round, every: 1_000)
            let length = Int(random.next() % 64)
            var input = random.bytes(count: length)
            if round % 2 == 0, !input.isEmpty {
                // Start half of them with a map header so the frame decoders get further.
                input[0] = 0x80 | (input[0] & 0x0f)
            }
            if (try? MessagePackValue.decode(input)) != nil { decoded += 1 }
            _ = try? ClientFrame.decode(input)
            _ = try? ServerFrame.decode(input)
        }
        #expect(decoded > 0)
    }

    @Test("random mutations of valid frames never crash")
    func mutatedFrames() async {
        let frames: [[UInt8]] = [
            ClientFrame.login(id: 1, Login(appId: "app", userId: "u", token: "t", heartbeatInterval: 5, presenceTimeout: 30))
                .encode(),
            ClientFrame.publish(id: 9, channelType: .message, channel: "c", message: .string("hi"), customType: "x").encode(),
            ServerFrame.closing(reason: .sameUidLogin, detail: "again").encode(),
        ]
        var random = SeededGenerator(seed: 42)
        var decoded = (client: 0, server: 0, value: 0)
        let rounds = 10_000
        for round in 0..<rounds {
            await SharedExecutor.yield(atStep: round, every: 1_000)
            var input = frames[round % frames.count]
            for _ in 0..<(1 + Int(random.next() % 4)) {
                let position = Int(random.next() % UInt64(input.count))
                input[position] = UInt8(truncatingIfNeeded: random.next())
            }
            if (try? ClientFrame.decode(input)) != nil { decoded.client += 1 }
            if (try? ServerFrame.decode(input)) != nil { decoded.server += 1 }
            if (try? MessagePackValue.decode(input)) != nil { decoded.value += 1 }
        }
        // The decoders ran to the end on some mutations (a changed character still makes a frame)
        // and refused others: the inputs reached past the first byte.
        #expect((1..<rounds / 3).contains(decoded.client), "\(decoded)")
        #expect((1..<rounds / 3).contains(decoded.server), "\(decoded)")
        #expect(decoded.value > decoded.client + decoded.server, "\(decoded)")
    }
}
