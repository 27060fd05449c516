import Testing
import SwitchboardTestKit

/// The generator the robustness tests draw their inputs from: the same inputs on every run.
@Suite(.timeLimit(.minutes(2))) struct SeededGeneratorTests {
    @Test func bytesRepeatForASeedAndStayInTheirRange() {
        var first = SeededGenerator(seed: 7), second = SeededGenerator(seed: 7), other = SeededGenerator(seed: 8)
        let bytes = first.bytes(count: 1_001)
        #expect(bytes.count == 1_001)
        #expect(bytes == second.bytes(count: 1_001))
        #expect(bytes != other.bytes(count: 1_001))
        #expect(Set(bytes).count > 200, "a thousand bytes take most of the 256 values")

        let printable = first.bytes(count: 5_000, in: 0x20...0x7E)
        #expect(printable.allSatisfy { (0x20...0x7E).contains($0) })
        #expect(Set(printable).count == 95)
        #expect(first.bytes(count: 0).isEmpty)
        #expect(first.bytes(count: 3, in: 9...9) == [9, 9, 9])
    }

    @Test func numbersBelowABoundStayBelowIt() {
        var random = SeededGenerator(seed: 1)
        let drawn = (0..<2_000).map { _ in random.next(below: 7) }
        #expect(drawn.allSatisfy { (0..<7).contains($0) })
        #expect(Set(drawn) == Set(0..<7))
    }
}
