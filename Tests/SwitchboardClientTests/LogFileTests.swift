import Foundation
import Testing

@testable import SwitchboardClient
import SwitchboardCore

/// The SDK log file that `RtmLogConfig` describes: where, which levels, how big.
@Suite(.timeLimit(.minutes(5))) struct LogFileTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("switchboard-log-\(UUID().uuidString)").path
    static let fixedTime = Date(timeIntervalSince1970: 1_777_777_777.25)

    func config(_ path: String? = nil, sizeInKB: Int32 = 1024, level: RtmLogLevel = .info) -> RtmLogConfig {
        let config = RtmLogConfig()
        config.filePath = path ?? folder
        config.fileSizeInKB = sizeInKB
        config.level = level
        return config
    }

    func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test func theSettingsFollowTheReference() throws {
        #expect(LogFile.Settings(nil) == nil)
        #expect(LogFile.Settings(config("")) == nil)
        #expect(LogFile.Settings(config(level: .none)) == nil)
        let inFolder = try #require(LogFile.Settings(config()))
        #expect(inFolder.path == folder + "/agora.log")
        #expect(inFolder.maxBytes == 1024 * 1024)
        #expect(LogFile.Settings(config(folder + "/app.log"))?.path == folder + "/app.log")
        #expect(LogFile.Settings(config(sizeInKB: 10))?.maxBytes == 128 * 1024)
        #expect(LogFile.Settings(config(sizeInKB: 5000))?.maxBytes == 1024 * 1024)
        let client = RtmClientConfig(appId: "app", userId: "alice", logConfig: config(level: .warn))
        #expect(try ClientSettings(client, environment: [:]).log == LogFile.Settings(config(level: .warn)))
    }

    @Test func stampsAreUTCCalendarTimesWithMilliseconds() {
        let expected: [(TimeInterval, String)] = [
            (0, "1970-01-01 00:00:00.000"), (951_782_400.25, "2000-02-29 00:00:00.250"),
            (1_777_637_045.125, "2026-05-01 12:04:05.125"), (4_102_444_799.5, "2099-12-31 23:59:59.500"),
            (-1.5, "1969-12-31 23:59:58.500"),
        ]
        for (seconds, text) in expected {
            #expect(LogFile.stamp(Date(timeIntervalSince1970: seconds)) == text)
        }
    }

    @Test func linesAreStampedAndFilteredByLevel() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let settings = try #require(LogFile.Settings(config(level: .warn)))
        let now: @Sendable () -> Date = { Self.fixedTime }
        let log = try #require(LogFile(settings, now: now))
        log.write(.info, "connecting")
        log.write(.warn, "reconnecting to ws://127.0.0.1:9100/")
        log.write(.error, "login failed: invalidToken")
        log.write(.fatal, "gave up")
        log.write(.none, "never")
        #expect(lines(folder + "/agora.log") == [
            "2026-05-03 03:09:37.250 [WARN] reconnecting to ws://127.0.0.1:9100/",
            "2026-05-03 03:09:37.250 [ERROR] login failed: invalidToken",
            "2026-05-03 03:09:37.250 [FATAL] gave up",
        ])
    }

    @Test func theFileNeverGrowsPastItsSizeAndTheOlderPartIsKeptOnce() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let settings = try #require(LogFile.Settings(config(sizeInKB: 128)))
        let log = try #require(LogFile(settings))
        let filler = String(repeating: "x", count: 1000)
        for index in 0..<400 { log.write(.info, "\(index) \(filler)") }
        let path = folder + "/agora.log"
        let current = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let previous = try #require(try FileManager.default.attributesOfItem(atPath: path + ".1")[.size] as? Int)
        #expect(current <= 128 * 1024 && previous <= 128 * 1024)
        #expect(lines(path).last?.contains("] 399 x") == true)
        #expect(!FileManager.default.fileExists(atPath: path + ".2"))
        // Reopening appends to what is there and keeps counting its size.
        let again = try #require(LogFile(settings))
        again.write(.info, "after reopening")
        #expect(lines(path).last?.hasSuffix("after reopening") == true)
        let reopened = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(reopened <= 128 * 1024)
    }

    @Test func linesFromManyThreadsStayWhole() async throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let settings = try #require(LogFile.Settings(config()))
        let log = try #require(LogFile(settings))
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask { for index in 0..<500 { log.write(.info, "writer \(writer) line \(index) end") } }
            }
        }
        let written = lines(folder + "/agora.log")
        #expect(written.count == 4000)
        #expect(written.allSatisfy { $0.hasSuffix(" end") && $0.contains("[INFO] writer ") })
    }
}
