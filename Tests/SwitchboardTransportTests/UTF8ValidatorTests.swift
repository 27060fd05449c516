import Testing
@testable import SwitchboardTransport

@Suite(.timeLimit(.minutes(5))) struct UTF8ValidatorTests {
    @Test func acceptsValidText() {
        #expect(UTF8Validator.isValid(Array("héllo wörld € 𝄞 你好".utf8)))
        #expect(UTF8Validator.isValid([]))
        #expect(UTF8Validator.isValid([0xF4, 0x8F, 0xBF, 0xBF]))
    }

    @Test(arguments: [
        [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF0, 0x80, 0x80, 0x80],
        [0xF4, 0x90, 0x80, 0x80], [0xF5], [0xFF], [0x80], [0xCE, 0xBA, 0xE1],
    ] as [[UInt8]])
    func rejectsInvalidSequences(_ bytes: [UInt8]) {
        #expect(!UTF8Validator.isValid(bytes))
    }

    @Test func splitAcrossFeeds() {
        let bytes = Array("κόσμε 𝄞".utf8)
        for split in 0...bytes.count {
            var validator = UTF8Validator()
            let first = validator.feed(Array(bytes[..<split]))
            let second = validator.feed(Array(bytes[split...]))
            #expect(first && second)
            #expect(validator.isAtBoundary)
        }
    }

    @Test func failsFastOnFirstBadByte() {
        var validator = UTF8Validator()
        let ok = validator.feed([0x61, 0xED, 0xA0])
        #expect(!ok)
    }
}
