import Testing
import SwitchboardWire

@Suite("MessagePack encoding", .timeLimit(.minutes(2)))
struct MessagePackEncodingTests {
    @Test("integers use the smallest encoding", arguments: [
        (Int64(0), "00"), (127, "7f"), (128, "cc80"), (255, "ccff"), (256, "cd0100"),
        (65535, "cdffff"), (65536, "ce00010000"), (4_294_967_295, "ceffffffff"),
        (4_294_967_296, "cf0000000100000000"), (Int64.max, "cf7fffffffffffffff"),
        (-1, "ff"), (-32, "e0"), (-33, "d0df"), (-128, "d080"), (-129, "d1ff7f"),
        (-32768, "d18000"), (-32769, "d2ffff7fff"), (-2_147_483_648, "d280000000"),
        (-2_147_483_649, "d3ffffffff7fffffff"), (Int64.min, "d38000000000000000"),
    ])
    func integers(value: Int64, expected: String) {
        var writer = MessagePackWriter()
        writer.writeInt(value)
        #expect(hex(writer.bytes) == expected)
    }

    @Test func sizesAreWhatTheWriterWrites() {
        // Every boundary of every form, and the values around it.
        let boundaries = [0, 1, 15, 16, 31, 32, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x1_0000, 70_000]
        for length in boundaries.flatMap({ [$0 - 1, $0, $0 + 1] }) where length >= 0 {
            var writer = MessagePackWriter()
            writer.writeString(String(repeating: "a", count: length))
            #expect(writer.bytes.count == MessagePackSize.string(utf8Count: length), "string of \(length)")
            writer = MessagePackWriter()
            writer.writeBinary([UInt8](repeating: 1, count: length))
            #expect(writer.bytes.count == MessagePackSize.binary(count: length), "binary of \(length)")
            writer = MessagePackWriter()
            writer.writeMapHeader(length)
            #expect(writer.bytes.count == MessagePackSize.mapHeader(length), "map of \(length)")
        }
        let values: [UInt64] = [0, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x1_0000, 0xffff_ffff, 0x1_0000_0000, .max]
        for value in values {
            var writer = MessagePackWriter()
            writer.writeUInt(value)
            #expect(writer.bytes.count == MessagePackSize.uint(value), "uint \(value)")
        }
    }

    @Test func aBufferWriterCopiesBytesOfEveryShortLengthExactlyWhereTheyBelong() {
        let source = (0..<48).map { UInt8($0 + 1) }
        for length in 1...40 {
            for start in 0..<3 {
                var memory = [UInt8](repeating: 0, count: 48)
                memory.withUnsafeMutableBytes { buffer in
                    var writer = MessagePackBufferWriter(buffer)
                    for _ in 0..<start { writer.append(0xEE) }
                    source.withUnsafeBytes { writer.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
                    #expect(writer.count == start + length)
                }
                #expect(Array(memory[..<start]) == [UInt8](repeating: 0xEE, count: start))
                #expect(Array(memory[start..<(start + length)]) == Array(source[..<length]), "length \(length) at \(start)")
                #expect(memory[(start + length)...].allSatisfy { $0 == 0 }, "nothing written past length \(length)")
            }
        }
    }

    @Test func uint64Max() {
        #expect(hex(pack(.uint(.max))) == "cfffffffffffffffff")
    }

    @Test func scalars() {
        #expect(hex(pack(.nil)) == "c0")
        #expect(hex(pack(.bool(false))) == "c2")
        #expect(hex(pack(.bool(true))) == "c3")
        #expect(hex(pack(.float(1.5))) == "ca3fc00000")
        #expect(hex(pack(.double(1.5))) == "cb3ff8000000000000")
    }

    @Test("string headers at each length boundary", arguments: [
        (0, "a0"), (31, "bf"), (32, "d920"), (255, "d9ff"), (256, "da0100"), (65535, "daffff"),
        (65536, "db00010000"),
    ])
    func stringHeaders(length: Int, header: String) {
        let encoded = pack(.string(String(repeating: "a", count: length)))
        #expect(hex(Array(encoded.prefix(header.count / 2))) == header)
        #expect(encoded.count == header.count / 2 + length)
    }

    @Test("binary headers at each length boundary", arguments: [
        (0, "c400"), (255, "c4ff"), (256, "c50100"), (65535, "c5ffff"), (65536, "c600010000"),
    ])
    func binaryHeaders(length: Int, header: String) {
        let encoded = pack(.binary([UInt8](repeating: 7, count: length)))
        #expect(hex(Array(encoded.prefix(header.count / 2))) == header)
        #expect(encoded.count == header.count / 2 + length)
    }

    @Test("container headers at each count boundary", arguments: [
        (0, "90", "80"), (15, "9f", "8f"), (16, "dc0010", "de0010"), (65535, "dcffff", "deffff"),
        (65536, "dd00010000", "df00010000"),
    ])
    func containerHeaders(count: Int, arrayHeader: String, mapHeader: String) {
        var writer = MessagePackWriter()
        writer.writeArrayHeader(count)
        #expect(hex(writer.bytes) == arrayHeader)
        writer = MessagePackWriter()
        writer.writeMapHeader(count)
        #expect(hex(writer.bytes) == mapHeader)
    }

    @Test func extensions() {
        #expect(hex(pack(.ext(type: 5, data: [1]))) == "d40501")
        #expect(hex(pack(.ext(type: -1, data: [1, 2, 3, 4]))) == "d6ff01020304")
        #expect(hex(pack(.ext(type: 1, data: [1, 2, 3]))) == "c7030101 0203".filter { $0 != " " })
        #expect(hex(pack(.ext(type: 1, data: []))) == "c70001")
    }
}
