import Foundation
import Testing
import SwitchboardClient
import SwitchboardCrypto
import SwitchboardTestKit

/// SIGHUP on a real `switchboard serve --config FILE`: the server's and an app's limits change
/// for the connections already open, an app added to `apps` is served and an app removed refuses
/// new logins, each change logged with its old and new value, what takes a restart named.
@Suite(.timeLimit(.minutes(3))) struct ReloadProcessTests {
    static func client(_ app: String, _ user: String, _ serve: ServeProcess) throws -> RtmClientKit {
        let config = RtmClientConfig(appId: app, userId: user)
        config.privateConfig = RtmPrivateConfig()
        config.privateConfig?.accessPointHosts = [serve.url]
        return try RtmClientKit(config, delegate: nil)
    }

    static func message(_ handle: FileHandle, _ prefix: String) async throws -> String {
        try await CommandLineProcessTests.readLogLine(handle) { $0["message"]?.hasPrefix(prefix) == true }["message"] ?? ""
    }

    @Test func sighupChangesTheLimitsAddsAndRemovesAppsAndNamesWhatWaitsForARestart() async throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("switchboard.json").path
        try #"""
            {"logFormat": "json", "limits": {"messages": {"subscribedChannelsPerClient": 3}},
             "apps": {"alpha": {"limits": {"messages": {"payloadMaxBytes": 10}}}}}
            """#.write(toFile: file, atomically: true, encoding: .utf8)
        let serve = try await ServeProcess.start(dataDirectory: directory, ["--config", file], logLevel: nil)
        defer { kill(serve.process.processIdentifier, SIGKILL) }
        let errors = serve.errors.fileHandleForReading
        _ = try await Self.message(errors, "switchboard listening")

        let alice = try Self.client("alpha", "alice", serve)
        #expect(await alice.login("").1 == nil)
        let eleven = Data(count: 11)
        #expect(await alice.publish(channelName: "room", data: eleven, option: nil).1?.errorCode == .channelMessageLengthExceedLimitation)
        for name in ["a", "b", "c"] { #expect(await alice.subscribe(channelName: name, option: nil).1 == nil) }
        #expect(await alice.subscribe(channelName: "d", option: nil).1?.errorCode == .channelInstanceExceedLimitation)
        let early = try Self.client("beta", "bob", serve)
        #expect(await early.login("").1?.errorCode == .invalidAppId)
        _ = early.destroy()

        try #"""
            {"logFormat": "json", "limits": {"messages": {"subscribedChannelsPerClient": 4}, "sessions": {"resumeBufferMaxBytes": 1000}},
             "apps": {"alpha": {"limits": {"messages": {"payloadMaxBytes": 100}}},
                      "beta": {"limits": {"messages": {"subscribedChannelsPerClient": 1}}}}}
            """#.write(toFile: file, atomically: true, encoding: .utf8)
        kill(serve.process.processIdentifier, SIGHUP)
        #expect(try await Self.message(errors, "reload: apps.alpha") == "reload: apps.alpha.limits.messages.payloadMaxBytes 10 → 100")
        #expect(try await Self.message(errors, "reload: apps.beta") == "reload: apps.beta not served → served")
        #expect(try await Self.message(errors, "reload: limits.") == "reload: limits.messages.subscribedChannelsPerClient 3 → 4")
        #expect(try await Self.message(errors, "reload: changed but")
            == "reload: changed but applied only at the next start: limits.sessions.resumeBufferMaxBytes")

        // The connection open before the reload gets the new limits at its next call.
        #expect(await alice.publish(channelName: "room", data: eleven, option: nil).1 == nil)
        #expect(await alice.subscribe(channelName: "d", option: nil).1 == nil)
        #expect(await alice.subscribe(channelName: "e", option: nil).1?.errorCode == .channelInstanceExceedLimitation)
        // The app added is served, with its own limits.
        let bob = try Self.client("beta", "bob", serve)
        #expect(await bob.login("").1 == nil)
        #expect(await bob.subscribe(channelName: "a", option: nil).1 == nil)
        #expect(await bob.subscribe(channelName: "b", option: nil).1?.errorCode == .channelInstanceExceedLimitation)

        // alpha removed: its new logins are refused, its session in progress goes on.
        try #"{"logFormat": "json", "apps": {"beta": {}}}"#.write(toFile: file, atomically: true, encoding: .utf8)
        kill(serve.process.processIdentifier, SIGHUP)
        #expect(try await Self.message(errors, "reload: apps.alpha") == "reload: apps.alpha served → not served (new logins refused)")
        let late = try Self.client("alpha", "carol", serve)
        #expect(await late.login("").1?.errorCode == .invalidAppId)
        #expect(await alice.publish(channelName: "room", message: "still here", option: nil).1 == nil)
        for client in [alice, bob, late] { _ = client.destroy() }
        try await serve.stop()
    }

    static let alpha = "970CA35de60c44645bbae8a215061b33", beta = "a3b9e0d1c2f94e6b8a7d5c4b3a291807"
    static let alphaCertificate = "5CFd2fd1755d40ecb72977518be15d3b", betaCertificate = "9e1d0c4b7a6f45e3b2c1d0e9f8a7b6c5"
    static let newAlphaCertificate = "0123456789abcdef0123456789abcdef"

    static func token(_ app: String, _ certificate: String, _ user: String) throws -> String {
        try TokenMinter.mint007(
            appId: app, appCertificate: certificate, userId: user, issuedAt: UInt32(Date().timeIntervalSince1970),
            expireSeconds: 3600, salt: 7)
    }

    static func apps(_ members: [(String, String)]) -> String {
        "{\"logFormat\": \"json\", \"apps\": {" + members.map { "\"\($0.0)\": {\"certificate\": \"\($0.1)\"}" }.joined(separator: ", ") + "}}"
    }

    /// Writes a file of `apps` (id, certificate), sends SIGHUP and returns the first reload line about an app.
    static func reload(_ serve: ServeProcess, _ file: String, _ apps: [(String, String)]) async throws -> String {
        try Self.apps(apps).write(toFile: file, atomically: true, encoding: .utf8)
        kill(serve.process.processIdentifier, SIGHUP)
        return try await message(serve.errors.fileHandleForReading, "reload: apps.")
    }

    /// A client of `user` in `app`, refused with a token signed with `wrong`, then logged in with
    /// one signed with `certificate`.
    static func logsIn(
        _ app: String, _ user: String, _ serve: ServeProcess, signedWith certificate: String, not wrong: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> RtmClientKit {
        let client = try Self.client(app, user, serve)
        let refused = await client.login(try token(app, wrong, user)).1?.errorCode
        #expect(refused == .invalidToken, sourceLocation: sourceLocation)
        #expect(await client.login(try token(app, certificate, user)).1 == nil, sourceLocation: sourceLocation)
        return client
    }

    @Test func sighupPutsAnAddedAppsCertificateInForceAndChangesAnAppsCertificate() async throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("switchboard.json").path
        try Self.apps([(Self.alpha, Self.alphaCertificate)]).write(toFile: file, atomically: true, encoding: .utf8)
        let serve = try await ServeProcess.start(dataDirectory: directory, ["--config", file], logLevel: nil)
        defer { kill(serve.process.processIdentifier, SIGKILL) }
        let errors = serve.errors.fileHandleForReading
        _ = try await Self.message(errors, "switchboard listening")
        let early = try Self.client(Self.beta, "bob", serve)
        #expect(await early.login(try Self.token(Self.beta, Self.betaCertificate, "bob")).1?.errorCode == .invalidAppId)

        #expect(try await Self.reload(serve, file, [(Self.alpha, Self.alphaCertificate), (Self.beta, Self.betaCertificate)])
            == "reload: apps.\(Self.beta) not served → served")
        let bob = try await Self.logsIn(Self.beta, "bob", serve, signedWith: Self.betaCertificate, not: Self.alphaCertificate)

        // alpha's certificate changes: tokens signed with the old one are refused from now on.
        #expect(try await Self.reload(serve, file, [(Self.alpha, Self.newAlphaCertificate), (Self.beta, Self.betaCertificate)])
            == "reload: apps.\(Self.alpha).certificate ****5d3b → ****cdef")
        let alice = try await Self.logsIn(Self.alpha, "alice", serve, signedWith: Self.newAlphaCertificate, not: Self.alphaCertificate)
        for client in [early, bob, alice] { _ = client.destroy() }
        try await serve.stop()
    }

    @Test func configCheckExitsZeroForAGoodPerAppFileAndOneNamingEachBadKey() async throws {
        let directory = temporaryDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = directory.appendingPathComponent("good.json").path
        try #"""
            {"limits": {"locks": {"ttlMax": 100}},
             "apps": {"alpha": {"limits": {"sessions": {"concurrentUsers": 10}, "locks": {"ttlMin": 20}}}}}
            """#.write(toFile: good, atomically: true, encoding: .utf8)
        let passed = try await CommandLineProcessTests.switchboard(["config", "check", good])
        #expect(passed.status == 0 && passed.text == "\(good): ok\n", "\(passed.text)")
        let bad = directory.appendingPathComponent("bad.json").path
        try """
            {"limits": {"locks": {"ttlMax": 100}},
             "apps": {"alpha": {"limits": {
               "sessions": {"concurrentUsers": 0, "resumeBufferMaxBytes": 5},
               "locks": {"ttlMin": 200, "perChanel": 3},
               "messages": {"payloadMaxBytes": "big"}
             }}}}

            """.write(toFile: bad, atomically: true, encoding: .utf8)
        let failed = try await CommandLineProcessTests.switchboard(["config", "check", bad])
        #expect(failed.status == 1)
        for line in [
            "\(bad):3: key \"apps.alpha.limits.sessions.concurrentUsers\" takes 1…100000000, not 0",
            "\(bad):3: key \"apps.alpha.limits.sessions.resumeBufferMaxBytes\" is server-wide, not per app: set limits.sessions.resumeBufferMaxBytes",
            "\(bad):4: key \"apps.alpha.limits.locks.perChanel\" is not a setting; did you mean \"perChannel\"?",
            "\(bad):4: key \"apps.alpha.limits.locks.ttlMin\" (200) is above limits.locks.ttlMax (100)",
            "\(bad):5: key \"apps.alpha.limits.messages.payloadMaxBytes\" takes a whole number in 1…65536",
        ] {
            #expect(failed.text.contains(line), "\(line)\n\(failed.text)")
        }
    }
}
