import SwitchboardTestKit
import Testing
@testable import SwitchboardTransport


@Suite(.timeLimit(.minutes(5))) struct ParserRobustnessTests {
    /// Parses `bytes` delivered in the chunk sizes drawn from `random`.
    func parseChunked(_ bytes: [UInt8], random: inout SeededGenerator) -> ([WebSocketEvent], WebSocketProtocolError?) {
        var parser = WebSocketParser(role: .server, maxMessageBytes: 4096)
        var events: [WebSocketEvent] = []
        var offset = 0
        while offset < bytes.count {
            let size = Int.random(in: 1...max(1, min(300, bytes.count - offset)), using: &random)
            parser.append(Array(bytes[offset..<(offset + size)]))
            offset += size
            do {
                while let event = try parser.next() { events.append(event) }
            } catch {
                return (events, error)
            }
        }
        return (events, nil)
    }

    func randomStream(_ random: inout SeededGenerator) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<Int.random(in: 1...12, using: &random) {
            let choice = Int.random(in: 0..<10, using: &random)
            let length = Int.random(in: 0...(choice < 3 ? 125 : 3000), using: &random)
            var payload = random.bytes(count: length, in: 0x20...0x7E)
            switch choice {
            case 0: bytes += wireFrame(opcode: 9, payload: Array(payload.prefix(125)))
            case 1: bytes += wireFrame(opcode: 10, payload: Array(payload.prefix(125)))
            case 2:
                bytes += wireFrame(fin: false, opcode: 1, payload: payload)
                    + wireFrame(opcode: 9, payload: [])
                    + wireFrame(opcode: 0, payload: Array("é".utf8))
            case 3 where length > 0:
                payload[Int.random(in: 0..<length, using: &random)] = 0xFF
                bytes += wireFrame(opcode: 1, payload: payload)
            case 4: bytes += [UInt8.random(in: 0...255, using: &random), UInt8.random(in: 0...255, using: &random)]
            default: bytes += wireFrame(opcode: choice % 2 == 0 ? 1 : 2, payload: payload)
            }
        }
        return bytes
    }

    @Test func chunkingNeverChangesTheOutcome() async {
        var random = SeededGenerator(seed: 0x5157_1CEB_0A2D)
        for round in 0..<300 {
            await SharedExecutor.yield(atStep: round, every: 25)
            let bytes = randomStream(&random)
            let whole = parseAll(bytes, maxMessageBytes: 4096)
            let chunked = parseChunked(bytes, random: &random)
            #expect(chunked.0 == whole.events)
            #expect(chunked.1 == whole.error)
        }
    }

    /// Reads parsed where they were received (`parseRead`, as a connection reads its socket) give
    /// what the whole stream parsed at once gives, wherever the reads split it: frames parsed in
    /// one read's buffer, an incomplete last frame kept for the next read, and reads that follow
    /// kept bytes parsed after them.
    @Test func readsParsedInPlaceGiveWhatTheWholeStreamGives() async {
        var random = SeededGenerator(seed: 0x1EA7_5EED)
        var (lentInPlace, binaries) = (0, 0)
        for round in 0..<300 {
            await SharedExecutor.yield(atStep: round, every: 25)
            let bytes = randomStream(&random)
            let whole = parseAll(bytes, maxMessageBytes: 4096)
            var reads: [[UInt8]] = []
            var offset = 0
            while offset < bytes.count {
                // Mostly reads of whole frames' worth (up to 3000 bytes), sometimes a few bytes.
                let most = Int.random(in: 0..<4, using: &random) == 0 ? 7 : 3000
                let size = Int.random(in: 1...max(1, min(most, bytes.count - offset)), using: &random)
                reads.append(Array(bytes[offset..<(offset + size)]))
                offset += size
            }
            let read = parseReads(reads, maxMessageBytes: 4096)
            #expect(read.events == whole.events)
            #expect(read.error == whole.error)
            lentInPlace += read.lent
            binaries += read.events.count { if case .message(.binary) = $0 { true } else { false } }
        }
        // Both ways are taken: in a read's bytes, and after bytes kept from an earlier read.
        // (With this seed, 56 of 271 binary messages lie whole in one read.)
        #expect(lentInPlace >= 40, "binary messages are lent where they were read")
        #expect(lentInPlace <= binaries - 40, "and the rest follow bytes kept from earlier reads")
    }

    @Test func randomBytesNeverCrashAndEndInAnErrorOrNeedMore() {
        var random = SeededGenerator(seed: 42)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...200, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let result = parseAll(bytes, maxMessageBytes: 1024)
            if let error = result.error {
                #expect([1002, 1007, 1009].contains(error.code.rawValue))
            }
        }
    }
}
