import Testing
import SwitchboardCore

/// A connection's memo of its last user-channel receiver: found only for the same user id, byte
/// for byte, at the generation it was filled at.
@Suite(.timeLimit(.minutes(1))) struct ReceiverMemoTests {
    func withBytes<T>(_ text: String, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        Array(text.utf8).withUnsafeBytes(body)
    }

    @Test func aMemoHoldsItsUserAtItsGenerationOnly() {
        var memo = ReceiverMemo()
        #expect(withBytes("bob") { memo.session(of: $0, at: 0) } == nil)
        withBytes("bob") { memo.remember(SessionID(7), of: $0, at: 3) }
        #expect(withBytes("bob") { memo.session(of: $0, at: 3) } == SessionID(7))
        #expect(withBytes("bob") { memo.session(of: $0, at: 4) } == nil)
        #expect(withBytes("bo") { memo.session(of: $0, at: 3) } == nil)
        #expect(withBytes("bod") { memo.session(of: $0, at: 3) } == nil)
        #expect(withBytes("") { memo.session(of: $0, at: 3) } == nil)
    }

    @Test func longUserIdsDifferingInAnyByteAreOtherUsers() {
        // Lengths around the 8-byte steps of the comparison, each differing at every position.
        for length in [1, 7, 8, 9, 15, 16, 17, 63, 64] {
            let name = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            var memo = ReceiverMemo()
            name.withUnsafeBytes { memo.remember(SessionID(UInt64(length)), of: $0, at: 1) }
            #expect(name.withUnsafeBytes { memo.session(of: $0, at: 1) } == SessionID(UInt64(length)))
            for position in 0..<length {
                var other = name
                other[position] ^= 0x20
                #expect(other.withUnsafeBytes { memo.session(of: $0, at: 1) } == nil, "length \(length), byte \(position)")
            }
            // Filled again with another user of the same length: the old one no longer matches.
            let replaced = name.map { $0 == UInt8(ascii: "a") ? UInt8(ascii: "z") : UInt8(ascii: "a") }
            replaced.withUnsafeBytes { memo.remember(SessionID(99), of: $0, at: 2) }
            #expect(replaced.withUnsafeBytes { memo.session(of: $0, at: 2) } == SessionID(99))
            #expect(name.withUnsafeBytes { memo.session(of: $0, at: 2) } == nil)
        }
    }
}
