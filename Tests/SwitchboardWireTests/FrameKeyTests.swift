import Testing
@testable import SwitchboardWire

@Suite(.timeLimit(.minutes(2))) struct FrameKeyTests {
    @Test func everyKeyIsFoundFromItsBytesAndNothingElseIs() {
        for key in FrameKey.allCases {
            let utf8 = Array(key.rawValue.utf8)
            #expect(FrameKey.match(utf8) == key)
            // In the middle of a larger buffer, as keys lie in a frame.
            let framed = [0xa0, 0xff] + utf8 + [0x01]
            #expect(FrameKey.match(framed[2..<(2 + utf8.count)]) == key)
            // Near misses: any one byte changed, one short, one more.
            for position in utf8.indices {
                var changed = utf8
                changed[position] ^= 0x20
                #expect(FrameKey.match(changed) != key, "\(key) with byte \(position) changed")
            }
            #expect(FrameKey.match(utf8.dropLast()) != key)
            #expect(FrameKey.match(utf8 + [0x61]) != key)
        }
        #expect(FrameKey.match([UInt8]()) == nil)
        #expect(FrameKey.match(Array(repeating: UInt8(ascii: "a"), count: 300)) == nil)
        #expect(FrameKey.match(Array("nosuchkey".utf8)) == nil)
    }
}
