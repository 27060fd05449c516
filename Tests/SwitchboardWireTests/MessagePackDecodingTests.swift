import Testing
import SwitchboardWire

@Suite("MessagePack decoding", .timeLimit(.minutes(2)))
struct MessagePackDecodingTests {
    static let samples: [MessagePackValue] = [
        .nil, .bool(true), .bool(false), .uint(0), .uint(127), .uint(128), .uint(65536), .uint(.max),
        .int(-1), .int(-33), .int(-129), .int(-32769), .int(.min), .float(-0.25), .double(.pi),
        .string(""), .string("héllo 👋 мир"), .string(String(repeating: "x", count: 70_000)),
        .binary([]), .binary([0, 255, 1]), .binary([UInt8](repeating: 9, count: 70_000)),
        .array([]), .array([.uint(1), .string("a"), .array([.nil])]),
        .map([]), .map([MessagePackPair(.string("k"), .map([MessagePackPair(.uint(1), .bool(true))]))]),
        .ext(type: 3, data: [1, 2]), .ext(type: -1, data: [UInt8](repeating: 0, count: 12)),
        .array((0..<20).map { .uint(UInt64($0)) }),
    ]

    @Test("every value round-trips", arguments: samples)
    func roundTrip(value: MessagePackValue) throws {
        #expect(try MessagePackValue.decode(pack(value)) == value)
    }

    @Test func readsFromSliceAndRawBuffer() throws {
        let value = map(["a": .uint(1), "b": .string("two")])
        let framed = [0xAA] + pack(value) + [0xBB]
        #expect(try MessagePackValue.decode(framed[1..<(framed.count - 1)]) == value)
        let fromRaw = try pack(value).withUnsafeBytes { raw in try MessagePackValue.decode(raw) }
        #expect(fromRaw == value)
    }

    @Test("any integer encoding that fits is accepted")
    func integerWidening() throws {
        for encoded in ["05", "cc05", "cd0005", "ce00000005", "cf0000000000000005", "d005", "d10005",
                        "d200000005", "d30000000000000005"] {
            var reader = MessagePackReader(bytes(hex: encoded))
            #expect(try reader.readInteger(UInt8.self) == 5)
            reader = MessagePackReader(bytes(hex: encoded))
            #expect(try reader.readInteger(Int64.self) == 5)
        }
    }

    @Test("integers that do not fit throw instead of trapping")
    func integerOverflow() {
        for (encoded, type) in [("cd0100", "UInt8"), ("ff", "UInt32"), ("cfffffffffffffffff", "Int64"),
                                ("d38000000000000000", "UInt64"), ("d1ff7f", "Int8")] {
            var reader = MessagePackReader(bytes(hex: encoded))
            let error = wireError { () throws(WireError) in
                switch type {
                case "UInt8": _ = try reader.readInteger(UInt8.self)
                case "UInt32": _ = try reader.readInteger(UInt32.self)
                case "Int64": _ = try reader.readInteger(Int64.self)
                case "UInt64": _ = try reader.readInteger(UInt64.self)
                default: _ = try reader.readInteger(Int8.self)
                }
            }
            guard case .integerOutOfRange = error?.kind else {
                Issue.record("\(encoded) as \(type): \(String(describing: error))")
                continue
            }
        }
    }

    @Test func doubles() throws {
        var reader = MessagePackReader(bytes(hex: "ca3fc00000 cb3ff8000000000000 07"))
        #expect(try reader.readDouble() == 1.5)
        #expect(try reader.readDouble() == 1.5)
        #expect(try reader.readDouble() == 7)
    }

    @Test func typeMismatchNamesBothTypes() {
        var reader = MessagePackReader(bytes(hex: "a161"))
        let error = wireError { () throws(WireError) in try reader.readInteger(Int.self) }
        #expect(error?.kind == .typeMismatch(expected: "integer", found: "string"))
        #expect(error?.description.contains("expected integer, found string") == true)
    }

    @Test func skipsEveryKindOfValue() throws {
        var writer = MessagePackWriter()
        for value in Self.samples { writer.writeValue(value) }
        writer.writeString("end")
        var reader = MessagePackReader(writer.bytes)
        for _ in Self.samples { try reader.skipValue() }
        #expect(try reader.readString() == "end")
        #expect(reader.isAtEnd)
    }
}
