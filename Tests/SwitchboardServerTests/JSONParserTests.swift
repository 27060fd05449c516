import Foundation
import Testing
import SwitchboardTestKit

@testable import SwitchboardServer

/// The server API's JSON reader: what RFC 8259 allows, exactly; what it does not, refused with
/// where; and the bounds that keep a hostile body cheap. Foundation's reader is the oracle for
/// seeded random documents.
@Suite(.timeLimit(.minutes(2))) struct JSONParserTests {
    func parse(_ text: String) throws(JSONParser.Failure) -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    @Test func valuesOfEveryKindKeepTheirOrderAndExactIntegers() throws {
        let value = try parse(#" {"b": [1, -0, 2.5, 1e3, true, false, null], "a": {"x": "y"}, "big": 9223372036854775807} "#)
        #expect(value.members.map(\.0) == ["b", "a", "big"])
        #expect(value["b"] == .array([.integer(1), .integer(0), .double(2.5), .double(1000), .bool(true), .bool(false), .null]))
        #expect(value["big"] == .integer(.max))
        #expect(try parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(value.text == #"{"b":[1,0,2.5,1000.0,true,false,null],"a":{"x":"y"},"big":9223372036854775807}"#)
    }

    @Test func stringEscapesAndUnicodeRoundTrip() throws {
        #expect(try parse(#""a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00""#) == .string("a\"\\/\u{08}\u{0C}\n\r\té😀"))
        #expect(try parse("\"é😀\"") == .string("é😀"))
        let text = JSONValue.string("quote \" backslash \\ control \u{01} é").text
        #expect(try parse(text) == .string("quote \" backslash \\ control \u{01} é"))
    }

    @Test(arguments: [
        "", " ", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "01", "1.", ".5", "-", "1e", "+1", "tru", "nul",
        "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00x\"", "\"\u{01}\"", "1 2", "{\"a\":1}}", "[1] x",
        "{\"a\":1,\"a\":2}", "1e400", "NaN",
    ])
    func malformedTextIsRefused(text: String) {
        #expect(throws: JSONParser.Failure.self) { try parse(text) }
    }

    @Test func invalidUTF8InAStringIsRefused() {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xED, 0xA0, 0x80, 0x22]) }
    }

    @Test func nestingIsBoundedAndAMegabyteOfBracketsFailsFast() throws {
        #expect(try JSONParser.parse(Array((String(repeating: "[", count: 16) + String(repeating: "]", count: 16)).utf8), maxDepth: 16)
            != .null)
        #expect(throws: JSONParser.Failure.self) {
            try JSONParser.parse(Array((String(repeating: "[", count: 17) + String(repeating: "]", count: 17)).utf8), maxDepth: 16)
        }
        let hostile = [UInt8](repeating: UInt8(ascii: "["), count: 1 << 20)
        let started = ContinuousClock.now
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(hostile, maxDepth: 16) }
        #expect(ContinuousClock.now - started < .seconds(1))
    }

    @Test func seededRandomDocumentsReadAsFoundationReadsThem() throws {
        var random = SeededGenerator(seed: 21)
        func document(_ depth: Int) -> Any {
            switch random.next(below: depth > 3 ? 4 : 6) {
            case 0: return random.next(below: 2) == 0
            case 1: return Int(random.next(below: 2_000_000)) - 1_000_000
            case 2: return String((0..<random.next(below: 8)).map { _ in "aé\"\\\n😀z ".randomElement(using: &random)! })
            case 3: return NSNull()
            case 4: return (0..<random.next(below: 4)).map { _ in document(depth + 1) }
            default:
                return Dictionary((0..<random.next(below: 4)).map { ("k\($0)", document(depth + 1)) }, uniquingKeysWith: { a, _ in a })
            }
        }
        func same(_ mine: JSONValue, _ theirs: Any) -> Bool {
            switch mine {
            case .null: theirs is NSNull
            case .bool(let value): (theirs as? Bool) == value
            case .integer(let value): (theirs as? Int).map { Int64($0) == value } ?? false
            case .double: false
            case .string(let value): (theirs as? String) == value
            case .array(let values):
                (theirs as? [Any]).map { $0.count == values.count && zip(values, $0).allSatisfy(same) } ?? false
            case .object(let members):
                (theirs as? [String: Any]).map { dictionary in
                    dictionary.count == members.count && members.allSatisfy { name, value in dictionary[name].map { same(value, $0) } ?? false }
                } ?? false
            }
        }
        for _ in 0..<300 {
            let original = ["doc": document(0)]
            let data = try JSONSerialization.data(withJSONObject: original)
            let mine = try JSONParser.parse(Array(data))
            let theirs = try JSONSerialization.jsonObject(with: data)
            #expect(same(mine, theirs), "\(String(decoding: data, as: UTF8.self))")
            #expect(try JSONParser.parse(Array(mine.text.utf8)) == mine)
        }
    }
}
