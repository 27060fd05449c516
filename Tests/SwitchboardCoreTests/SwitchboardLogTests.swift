import Foundation
import Synchronization
import Testing
import SwitchboardCore

/// The log's two formats, its ids, and a level shared by every copy.
@Suite(.timeLimit(.minutes(1))) struct SwitchboardLogTests {
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        func append(_ line: String) { lines.withLock { $0.append(line) } }
    }

    @Test func jsonLinesCarryTimeLevelModuleMessageAndTheIds() throws {
        let lines = Lines()
        let log = SwitchboardLog(level: .debug, format: .json) { lines.append($0) }
        let caller = Caller(app: "demo", userId: "alice", session: SessionID(7))
        log.labeled("presence").with(LogIDs(connection: "3"))(.warning, "a \"quoted\"\nline", LogIDs(caller).merged(with: LogIDs(channel: "room", requestId: "r-1")))
        log(.info, "plain")
        let objects = try lines.all.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]) }
        #expect(objects.count == 2)
        let first = objects[0]
        #expect(first["level"] == "warning" && first["module"] == "presence" && first["message"] == "a \"quoted\"\nline")
        #expect(first["connection"] == "3" && first["session"] == "7" && first["app"] == "demo" && first["user"] == "alice")
        #expect(first["channel"] == "room" && first["requestId"] == "r-1")
        let time = try #require(first["time"])
        #expect(time.hasSuffix("Z"))
        #expect(try Date(time, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)).timeIntervalSinceNow > -60)
        #expect(objects[1] == ["time": objects[1]["time"]!, "level": "info", "module": "server", "message": "plain"])
    }

    @Test func textLinesKeepTheirShapeWithTheIdsAfter() {
        let lines = Lines()
        let log = SwitchboardLog(level: .info) { lines.append($0) }
        log.labeled("lock")(.info, "held")
        log(.error, "failed", LogIDs(user: "bob", requestId: "r-9"))
        log(.debug, "not written")
        #expect(lines.all == ["[info] lock: held", "[error] failed (user=bob requestId=r-9)"])
    }

    @Test func everyCopySharesTheLevelAndTheFormat() {
        let lines = Lines()
        let log = SwitchboardLog(level: .warning) { lines.append($0) }
        let module = log.labeled("session")
        module(.info, "before")
        log.setLevel(.debug)
        log.setFormat(.json)
        module(.info, "after")
        #expect(module.level == .debug && module.format == .json)
        #expect(lines.all.count == 1 && lines.all[0].contains("\"message\":\"after\""))
        log.setLevel(.none)
        module(.error, "silenced")
        #expect(lines.all.count == 1)
    }
}
