import Testing
import SwitchboardWire

@Suite("MessagePack on hostile input", .timeLimit(.minutes(2)))
struct MessagePackHostileInputTests {
    @Test("every truncation of a valid value throws")
    func truncation() {
        let value = map([
            "s": .string("héllo"), "b": .binary([1, 2, 3]), "n": .int(-70000), "u": .uint(.max),
            "a": .array([.double(1), .float(2), .nil, .bool(true)]), "e": .ext(type: 1, data: [9, 9]),
        ])
        let encoded = pack(value)
        for length in 0..<encoded.count {
            #expect(wireError { () throws(WireError) in try MessagePackValue.decode(encoded[0..<length]) } != nil)
        }
    }

    @Test("huge declared lengths are refused before allocating", arguments: [
        "dbffffffff", "c6ffffffff", "ddffffffff", "dfffffffff", "c9ffffffff01", "da0010", "dc0010", "de0008",
    ])
    func hugeLengths(encoded: String) {
        let error = wireError { () throws(WireError) in try MessagePackValue.decode(bytes(hex: encoded)) }
        guard case .lengthExceedsInput = error?.kind else {
            Issue.record("\(encoded): \(String(describing: error))")
            return
        }
    }

    @Test func nestedArraysDeclaringTheWholeInputAreRefused() {
        // Each level declares as many elements as the input has bytes left; reserving that much
        // at every level made a 65 KB input ask for tens of megabytes before it was refused.
        var nested: [UInt8] = []
        let total = 65_000
        for _ in 0..<31 {
            let count = UInt32(total - 5 * 31)
            nested += [0xdd, UInt8(count >> 24), UInt8((count >> 16) & 0xff), UInt8((count >> 8) & 0xff), UInt8(count & 0xff)]
        }
        nested += [UInt8](repeating: 0xc0, count: total - nested.count)
        let error = wireError { () throws(WireError) in try MessagePackValue.decode(nested) }
        #expect(error?.kind == .truncated)
    }

    @Test func deepNestingIsRefused() {
        let deep = [UInt8](repeating: 0x91, count: 100_000) + [0xc0]
        let error = wireError { () throws(WireError) in try MessagePackValue.decode(deep) }
        #expect(error?.kind == .nestingTooDeep(limit: Wire.maxNestingDepth))
        var reader = MessagePackReader(deep)
        #expect(wireError { () throws(WireError) in try reader.skipValue() }?.kind == .nestingTooDeep(limit: 32))

        let allowed = [UInt8](repeating: 0x91, count: 32) + [0xc0]
        #expect(wireError { () throws(WireError) in try MessagePackValue.decode(allowed) } == nil)
        let oneTooMany = [UInt8](repeating: 0x81, count: 1) + [UInt8](repeating: 0x91, count: 32) + [0xc0]
        #expect(wireError { () throws(WireError) in try MessagePackValue.decode(oneTooMany) } != nil)
    }

    @Test("invalid UTF-8 is refused", arguments: ["a1ff", "a2c328", "a3eda080", "a2c0af", "a4f4908080"])
    func invalidUTF8(encoded: String) {
        let error = wireError { () throws(WireError) in try MessagePackValue.decode(bytes(hex: encoded)) }
        #expect(error?.kind == .invalidUTF8)
    }

    @Test func reservedByteAndTrailingBytes() {
        #expect(wireError { () throws(WireError) in try MessagePackValue.decode([0xc1]) }?.kind == .reservedFormat(0xc1))
        #expect(wireError { () throws(WireError) in try MessagePackValue.decode([0xc0, 0xc0]) }?.kind == .trailingBytes(1))
        #expect(wireError { () throws(WireError) in try MessagePackValue.decode([]) }?.kind == .truncated)
    }
}
