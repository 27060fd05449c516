import Testing
import SwitchboardRedis

/// The pure values of the client: URLs, the reconnection backoff, scripts' SHA-1s.
@Suite(.timeLimit(.minutes(1))) struct RedisValuesTests {
    @Test func parsesEveryPartOfAURL() throws {
        let url = try #require(RedisURL("redis://alice:s%40cret%3A1@cache.internal:6380/3"))
        #expect(url.host == "cache.internal")
        #expect(url.port == 6380)
        #expect(url.username == "alice")
        #expect(url.password == "s@cret:1")
        #expect(url.database == 3)
        #expect(!url.secure)
        #expect(url.description == "redis://alice:***@cache.internal:6380/3")
    }

    @Test func fillsTheDefaults() throws {
        #expect(RedisURL("redis://localhost") == RedisURL(host: "localhost"))
        #expect(RedisURL("redis://localhost/") == RedisURL(host: "localhost"))
        #expect(RedisURL("REDIS://10.0.0.1:7000") == RedisURL(host: "10.0.0.1", port: 7000))
        #expect(RedisURL("rediss://redis.example.com") == RedisURL(host: "redis.example.com", secure: true))
        #expect(RedisURL("redis://:pw@h") == RedisURL(host: "h", password: "pw"))
        #expect(RedisURL("redis://bob@h") == RedisURL(host: "h", username: "bob"))
        #expect(RedisURL("redis://[::1]:6390/1") == RedisURL(host: "::1", port: 6390, database: 1))
        #expect(RedisURL("redis://[::1]")?.description == "redis://[::1]:6379")
    }

    @Test(arguments: [
        "http://localhost", "redis://", "redis://:6379", "redis://h:0", "redis://h:65536", "redis://h:port",
        "redis://h/-1", "redis://h/db", "redis://h?timeout=1", "redis://[::1", "redis://[::1]x",
        "redis://us%zzer:pw@h", "redis://h/1/2",
    ])
    func refusesWhatIsNotARedisURL(_ text: String) {
        #expect(RedisURL(text) == nil)
    }

    @Test func backoffDoublesUpToItsMaximum() {
        let backoff = RedisBackoff(initial: .milliseconds(100), maximum: .seconds(1), jitter: 0)
        let delays = (1...6).map { backoff.delay(attempt: $0) }
        #expect(
            delays == [
                .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1),
            ])
        #expect(backoff.delay(attempt: 1_000_000) == .seconds(1))
    }

    @Test func jitterShortensEachDelayWithinItsShare() {
        let backoff = RedisBackoff(initial: .milliseconds(100), maximum: .seconds(1), jitter: 0.5)
        var generator = SystemRandomNumberGenerator()
        let delays = (0..<200).map { _ in backoff.delay(attempt: 4, using: &generator) }
        #expect(delays.allSatisfy { $0 >= .milliseconds(400) && $0 <= .milliseconds(800) })
        #expect(Set(delays).count > 1)
    }

    @Test func aScriptIsNamedByTheSHA1OfItsSource() {
        // The digest Redis's own documentation gives for `SCRIPT LOAD "return 1"`.
        #expect(RedisScript("return 1").sha1 == "e0e1f9fabfc9d4800c877a703b823ac0578ff8db")
    }

    @Test func anErrorReplyIsSplitIntoItsKindAndMessage() {
        #expect(RedisError.reply(kind: "WRONGTYPE", message: "x").replyKind == "WRONGTYPE")
        #expect(RedisError.timedOut.replyKind == nil)
    }
}
