import Testing
import SwitchboardCore

/// Channel-name patterns of the server's channel list: `*` any run, `?` one character.
@Suite(.timeLimit(.minutes(1))) struct ChannelPatternTests {
    @Test(arguments: [
        ("", "room", true), ("*", "", true), ("room", "room", true), ("room", "rooms", false),
        ("room-*", "room-1", true), ("room-*", "room-", true), ("room-*", "lobby", false),
        ("*-1", "room-1", true), ("*-1", "room-12", false), ("r?om", "ruom", true), ("r?om", "rom", false),
        ("*a*b*c*", "xaxxbxxcx", true), ("*a*b*c*", "xaxxcxxbx", false), ("a**b", "ab", true),
        ("?", "é", true), ("??", "é", false), ("*é", "café", true),
    ])
    func matches(pattern: String, name: String, expected: Bool) {
        #expect(ChannelPattern(pattern).matches(name) == expected)
    }

    @Test func aPatternOfManyStarsAgainstALongNameStaysQuick() {
        let name = String(repeating: "a", count: 64)
        let started = ContinuousClock.now
        #expect(!ChannelPattern(String(repeating: "*a", count: 32) + "b").matches(name))
        #expect(ContinuousClock.now - started < .seconds(1))
    }
}
