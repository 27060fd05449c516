import SwitchboardBench
import SwitchboardCore
import SwitchboardWire

/// The `decode` scenario: no server, no socket. Times `ClientFrame.decode` on a point-to-point
/// publish of `--payload` bytes, as the server reads every request (from memory it holds), once
/// with a text message and once with a binary one. Rounds of 20,000 decodes alternate between
/// the two for `--duration` seconds; the line gives each one's fastest and median round in ns
/// per decode. The fastest round is the steadiest figure on a shared machine.
struct FrameDecoding {
    let options: BenchOptions

    func run(into line: inout JSONLine) {
        let text = ClientFrame.publish(
            id: 4_242, channelType: .user, channel: "user-4242",
            message: .string(String(repeating: "m", count: options.payload))
        ).encode()
        let binary = ClientFrame.publish(
            id: 4_242, channelType: .user, channel: "user-4242",
            message: .binary([UInt8](repeating: 0x6d, count: options.payload))
        ).encode()
        var textRounds: [Double] = []
        var binaryRounds: [Double] = []
        let end = MonotonicClock.now() + UInt64(options.duration * 1e9)
        repeat {
            textRounds.append(Self.round(text))
            binaryRounds.append(Self.round(binary))
        } while MonotonicClock.now() < end
        line.add("payload_bytes", options.payload)
        line.add("frame_bytes", text.count)
        line.add("rounds", textRounds.count)
        line.add("string_ns_min", textRounds.min() ?? 0, digits: 1)
        line.add("string_ns_median", Self.median(textRounds), digits: 1)
        line.add("binary_ns_min", binaryRounds.min() ?? 0, digits: 1)
        line.add("binary_ns_median", Self.median(binaryRounds), digits: 1)
    }

    /// Nanoseconds per decode over one round of `frame`.
    private static func round(_ frame: [UInt8]) -> Double {
        let decodes = 20_000
        var checksum: UInt64 = 0
        let start = MonotonicClock.now()
        frame.withUnsafeBufferPointer { bytes in
            for _ in 0..<decodes {
                // Every frame decodes (checked below): the sum keeps the work from being skipped.
                if let decoded = try? ClientFrame.decode(bytes) { checksum &+= UInt64(decoded.id) }
            }
        }
        let elapsed = MonotonicClock.now() - start
        precondition(checksum == UInt64(decodes) * 4_242, "every frame decodes")
        return Double(elapsed) / Double(decodes)
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}
