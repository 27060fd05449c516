import Testing
import SwitchboardRedis
import SwitchboardTestKit

/// The RESP reader: every RESP2 and RESP3 type, replies split anywhere, and refusals of bytes that
/// are not RESP or are larger than its bounds.
@Suite(.timeLimit(.minutes(2))) struct RESPReaderTests {
    /// Reads every whole reply of `text` fed at once.
    func replies(_ text: String, bounds: RESPReader.Bounds = .init()) throws -> [RESPValue] {
        var reader = RESPReader(bounds: bounds)
        reader.append(Array(text.utf8))
        var values: [RESPValue] = []
        while let value = try reader.next() { values.append(value) }
        return values
    }

    /// One reply of each kind, as a server would send it, and what it reads as.
    static let examples: [(wire: String, value: RESPValue)] = [
        ("+OK\r\n", .simpleString("OK")),
        ("-ERR unknown command 'FOO'\r\n", .error("ERR unknown command 'FOO'")),
        (":1000\r\n", .integer(1000)),
        (":-42\r\n", .integer(-42)),
        ("$5\r\nhello\r\n", .bulkString(Array("hello".utf8))),
        ("$0\r\n\r\n", .bulkString([])),
        ("$4\r\na\r\nb\r\n", .bulkString(Array("a\r\nb".utf8))),
        ("$-1\r\n", .null),
        ("*-1\r\n", .null),
        ("*0\r\n", .array([])),
        ("*2\r\n$3\r\nfoo\r\n:7\r\n", .array([.bulkString(Array("foo".utf8)), .integer(7)])),
        ("*2\r\n*1\r\n:1\r\n*0\r\n", .array([.array([.integer(1)]), .array([])])),
        ("_\r\n", .null),
        ("#t\r\n", .boolean(true)),
        ("#f\r\n", .boolean(false)),
        (",3.25\r\n", .double(3.25)),
        (",-inf\r\n", .double(-.infinity)),
        ("(3492890328409238509324850943850943825024385\r\n", .bigNumber("3492890328409238509324850943850943825024385")),
        ("!21\r\nSYNTAX invalid syntax\r\n", .error("SYNTAX invalid syntax")),
        ("=15\r\ntxt:Some string\r\n", .verbatim(format: "txt", text: "Some string")),
        ("%2\r\n+a\r\n:1\r\n+b\r\n#t\r\n", .map([RESPPair(.simpleString("a"), .integer(1)), RESPPair(.simpleString("b"), .boolean(true))])),
        ("~2\r\n+x\r\n+y\r\n", .set([.simpleString("x"), .simpleString("y")])),
        (">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n",
         .push([.bulkString(Array("message".utf8)), .bulkString(Array("ch".utf8)), .bulkString(Array("hi".utf8))])),
        ("|1\r\n+ttl\r\n:3600\r\n*1\r\n:2\r\n", .array([.integer(2)])),
        ("*2\r\n|1\r\n+key-popularity\r\n%0\r\n:1\r\n:2\r\n", .array([.integer(1), .integer(2)])),
    ]

    @Test func everyKindOfReplyReadsAsItsValue() throws {
        for (wire, value) in Self.examples {
            #expect(try replies(wire) == [value], "\(wire.debugDescription)")
        }
    }

    @Test func repliesSplitAtEveryByteReadTheSame() throws {
        let all = Self.examples.map(\.wire).joined()
        let bytes = Array(all.utf8)
        for cut in 0...bytes.count {
            var reader = RESPReader()
            var values: [RESPValue] = []
            reader.append(bytes[..<cut])
            while let value = try reader.next() { values.append(value) }
            reader.append(bytes[cut...])
            while let value = try reader.next() { values.append(value) }
            #expect(values == Self.examples.map(\.value), "cut at \(cut)")
            #expect(reader.bufferedBytes == 0)
        }
    }

    @Test func repliesFedOneByteAtATimeReadTheSame() throws {
        var random = SeededGenerator(seed: 11)
        var reader = RESPReader()
        var values: [RESPValue] = []
        var expected: [RESPValue] = []
        for _ in 0..<200 {
            let example = Self.examples[random.next(below: Self.examples.count)]
            expected.append(example.value)
            for byte in example.wire.utf8 {
                reader.append([byte])
                while let value = try reader.next() { values.append(value) }
            }
        }
        #expect(values == expected)
    }

    @Test func aHalfArrivedReplyIsNotTakenAndNotLost() throws {
        var reader = RESPReader()
        reader.append(Array("*2\r\n$5\r\nhel".utf8))
        #expect(try reader.next() == nil)
        reader.append(Array("lo\r\n:".utf8))
        #expect(try reader.next() == nil)
        reader.append(Array("9\r\n+next\r\n".utf8))
        #expect(try reader.next() == .array([.bulkString(Array("hello".utf8)), .integer(9)]))
        #expect(try reader.next() == .simpleString("next"))
        #expect(try reader.next() == nil)
    }

    @Test func bytesThatAreNotRESPAreRefused() {
        let bad = [
            "?what\r\n", ":12a\r\n", ":\r\n", ":99999999999999999999\r\n", "$-2\r\n", "$3\r\nabcd\r\n", "*-2\r\n",
            "#x\r\n", ",pi\r\n", "(12x\r\n", "=3\r\nabc\r\n", "_x\r\n", "+a\rb\r\n",
        ]
        for wire in bad {
            #expect(throws: RESPProtocolError.self, "\(wire.debugDescription)") { _ = try replies(wire) }
        }
    }

    @Test func lengthsPastTheBoundsAreRefusedBeforeAnythingIsReserved() throws {
        let bounds = RESPReader.Bounds(bulkBytes: 10, elements: 4, depth: 2, lineBytes: 8)
        #expect(throws: RESPProtocolError.self) { _ = try replies("$11\r\n", bounds: bounds) }
        #expect(throws: RESPProtocolError.self) { _ = try replies("*5\r\n", bounds: bounds) }
        #expect(throws: RESPProtocolError.self) { _ = try replies("%3\r\n", bounds: bounds) }
        #expect(throws: RESPProtocolError.self) { _ = try replies("*1\r\n*1\r\n*1\r\n", bounds: bounds) }
        #expect(throws: RESPProtocolError.self) { _ = try replies("+123456789", bounds: bounds) }
        #expect(throws: RESPProtocolError.self) { _ = try replies("$\(Int64.max)\r\n") }
        // Just within each bound: read.
        #expect(try replies("$10\r\n0123456789\r\n*4\r\n:1\r\n:2\r\n:3\r\n:4\r\n*1\r\n*1\r\n:0\r\n+1234567\r\n", bounds: bounds).count == 4)
    }

    @Test func commandsAreArraysOfBulkStringsThatReadBack() throws {
        let bytes = RESPCommand.encode(["SET", "sb:{app:room}", "va\r\nlue", ""])
        #expect(String(decoding: bytes, as: UTF8.self) == "*4\r\n$3\r\nSET\r\n$13\r\nsb:{app:room}\r\n$7\r\nva\r\nlue\r\n$0\r\n\r\n")
        var reader = RESPReader()
        reader.append(bytes)
        #expect(try reader.next() == .array(["SET", "sb:{app:room}", "va\r\nlue", ""].map { .bulkString(Array($0.utf8)) }))
    }
}
