import Foundation
import Synchronization
import Testing
import SwitchboardCore
import SwitchboardCrypto
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
@testable import SwitchboardCommandLine

/// `switchboard client` end to end: the command driven in-process against a real server on
/// 127.0.0.1, its output read as a user (or a program, with --json) would.
@Suite(.timeLimit(.minutes(2))) struct ClientCommandTests {
    /// What one run printed.
    final class Printed: Sendable {
        private let store = Mutex<(records: [String], notes: [String])>(([], []))
        private let interrupted = AsyncStream<Void>.makeStream()
        var records: [String] { store.withLock { $0.records } }
        var notes: [String] { store.withLock { $0.notes } }
        var output: ClientOutput {
            ClientOutput(
                record: { line in self.store.withLock { $0.records.append(line) } },
                note: { line in self.store.withLock { $0.notes.append(line) } },
                interruption: { [stream = interrupted.stream] in for await _ in stream {} })
        }
        /// Interrupts a `sub`, as Ctrl-C does.
        func interrupt() { interrupted.continuation.finish() }
        /// Waits until a `sub` says it is subscribed (its subscribe was answered: the server has
        /// applied it).
        func subscribed() async -> Bool { await eventually { notes.contains { $0.hasPrefix("subscribed to") } } }
        /// The records as JSON objects.
        var objects: [[String: Any]] {
            records.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
    }

    /// Runs `switchboard client` with `arguments` against `server`; returns the exit code and
    /// what it printed.
    static func client(
        _ arguments: [String], server: SwitchboardServer, user: String = "cli", printed: Printed = Printed()
    ) async throws -> (Int32, Printed) {
        let status = try await ClientCommand.run(
            arguments + ["--url", server.url, "--app-id", "demo", "--user", user], environment: [:], output: printed.output)
        return (status, printed)
    }

    @Test func subPrintsMessagesAndPresenceAsTheyArriveUntilCount() async throws {
        let server = try await TestServer.start()
        let watcher = Printed()
        let subscriber = Task { try await Self.client(["sub", "room", "--json", "--count", "3"], server: server, user: "watcher", printed: watcher) }
        #expect(await watcher.subscribed())
        let (_, occupancy) = try await Self.client(["presence", "room", "--json"], server: server)
        #expect(occupancy.objects.first?["totalOccupancy"] as? Int == 1)
        let (published, publishedOutput) = try await Self.client(["pub", "room", "hello there", "--custom-type", "greeting"], server: server, user: "alice")
        #expect(published == 0)
        #expect(publishedOutput.records == ["published on room"])
        let (sent, _) = try await Self.client(["send", "watcher", "psst"], server: server, user: "bob")
        #expect(sent == 0)

        let (status, printed) = try await subscriber.value
        #expect(status == 0)
        #expect(printed.notes == ["subscribed to room"])
        let events = printed.objects
        // The snapshot, then alice's message (she publishes without joining: no presence event
        // of hers), then bob's message to the watcher.
        #expect(events.count == 3, "\(printed.records)")
        #expect(events.first?["event"] as? String == "presence" && events.first?["type"] as? String == "snapshot")
        let hello = events.dropFirst().first ?? [:]
        #expect(hello["message"] as? String == "hello there" && hello["publisher"] as? String == "alice")
        #expect(hello["channel"] as? String == "room" && hello["customType"] as? String == "greeting")
        let psst = events.last ?? [:]
        #expect(psst["message"] as? String == "psst" && psst["publisher"] as? String == "bob" && psst["channelType"] as? String == "user")
        await server.shutdown()
    }

    @Test func subInTextShowsPresenceEvents() async throws {
        let server = try await TestServer.start()
        let watcher = Printed()
        let subscriber = Task { try await Self.client(["sub", "hall", "--count", "3"], server: server, user: "watcher", printed: watcher) }
        #expect(await watcher.subscribed())
        let (_, whereabouts) = try await Self.client(["where", "watcher", "--json"], server: server)
        #expect((whereabouts.objects.first?["channels"] as? [Any])?.count == 1)
        // A second subscriber joins and leaves: the watcher sees both.
        let visitor = Task { try await Self.client(["sub", "hall", "--count", "1"], server: server, user: "visitor") }
        _ = try await visitor.value
        let (_, printed) = try await subscriber.value
        #expect(printed.records.first?.hasPrefix("[hall] snapshot:") == true, "\(printed.records)")
        #expect(Array(printed.records.dropFirst()) == ["[hall] remoteJoinChannel: visitor", "[hall] remoteLeaveChannel: visitor"])
        await server.shutdown()
    }

    @Test func presenceAndWhereAnswerWhoIsWhere() async throws {
        let server = try await TestServer.start()
        // The snapshot, then the "bye" below.
        let carol = Printed()
        let subscriber = Task { try await Self.client(["sub", "lobby", "--count", "2"], server: server, user: "carol", printed: carol) }
        #expect(await carol.subscribed())
        #expect(try await Self.client(["where", "carol"], server: server).1.records == ["carol: lobby (message)"])
        let (_, who) = try await Self.client(["presence", "lobby"], server: server)
        #expect(who.records == ["lobby: 1 present\n  carol"])
        _ = try await Self.client(["pub", "lobby", "bye"], server: server)
        _ = try await subscriber.value
        await server.shutdown()
    }

    @Test func metaSetsReadsAndRemovesWithRevisions() async throws {
        let server = try await TestServer.start()
        #expect(try await Self.client(["meta", "set", "board", "color", "red"], server: server).1.records == ["set color on board"])
        let (_, read) = try await Self.client(["meta", "get", "board", "--json"], server: server)
        let items = try #require(read.objects.first?["items"] as? [[String: Any]])
        #expect(items.count == 1 && items[0]["key"] as? String == "color" && items[0]["value"] as? String == "red")
        let revision = try #require(items[0]["revision"] as? Int)
        // A write at a stale revision is refused by the server: exit code 1, the reference's code named.
        let (stale, staleOutput) = try await Self.client(["meta", "set", "board", "color", "blue", "--revision", String(revision + 5)], server: server)
        #expect(stale == 1)
        #expect(staleOutput.notes.first?.contains("failed") == true, "\(staleOutput.notes)")
        #expect(try await Self.client(["meta", "set", "board", "color", "blue", "--revision", String(revision)], server: server).0 == 0)
        let (_, one) = try await Self.client(["meta", "get", "board", "color"], server: server)
        #expect(one.records.first?.contains("color = blue") == true, "\(one.records)")
        #expect(try await Self.client(["meta", "remove", "board", "color"], server: server).0 == 0)
        let (missing, missingOutput) = try await Self.client(["meta", "get", "board", "color"], server: server)
        #expect(missing == 1 && missingOutput.notes == ["switchboard client: board has no item color"])
        await server.shutdown()
    }

    @Test func locksAreSetAcquiredListedAndReleased() async throws {
        let server = try await TestServer.start()
        // An app's client stays in the channel meanwhile, as a lock's users would.
        let memberOutput = Printed()
        let member = Task { try await Self.client(["sub", "doc"], server: server, user: "member", printed: memberOutput) }
        #expect(await memberOutput.subscribed())
        #expect(try await Self.client(["lock", "set", "doc", "editor", "--ttl", "30"], server: server).1.records == ["set lock editor on doc"])
        let (acquired, acquiredOutput) = try await Self.client(["lock", "acquire", "doc", "editor"], server: server, user: "dan")
        #expect(acquired == 0, "\(acquiredOutput.notes)")
        #expect(acquiredOutput.records == ["acquired lock editor on doc"])
        let (_, listed) = try await Self.client(["lock", "list", "doc", "--json"], server: server)
        let locks = try #require(listed.objects.first?["locks"] as? [[String: Any]])
        #expect(locks.count == 1 && locks.first?["lockName"] as? String == "editor" && locks.first?["ttl"] as? Int == 30, "\(listed.records)")
        // dan's run logged out, which released his lock: erin takes it.
        #expect(locks.first?["owner"] as? String == "")
        #expect(try await Self.client(["lock", "acquire", "doc", "editor"], server: server, user: "erin").0 == 0)
        let (released, releasedOutput) = try await Self.client(["lock", "release", "doc", "nothing"], server: server)
        #expect(released == 1 && releasedOutput.notes.first?.contains("releaseLock failed") == true, "\(releasedOutput.notes)")
        memberOutput.interrupt()
        #expect(try await member.value.0 == 0)
        #expect(memberOutput.notes == ["subscribed to doc; Ctrl-C to stop"])
        await server.shutdown()
    }

    @Test func theTokenIsMintedFromTheCertificateAndAWrongOneIsRefused() async throws {
        let appId = "demo", certificate = "5CFd2fd1755d40ecb72977518be15d3b"
        let server = try await TestServer.start(
            configure: { $0.appIds = [appId] }, modules: { $0.extensions.append(Crypto(credentials: [appId: certificate])) })
        let (minted, mintedOutput) = try await Self.client(["login", "--app-certificate", certificate], server: server, user: "frank")
        #expect(minted == 0, "\(mintedOutput.notes)")
        #expect(mintedOutput.records == ["logged in as frank to app demo at \(server.url)"])
        let (refused, refusedOutput) = try await Self.client(["login", "--token", "007bogus"], server: server, user: "frank")
        #expect(refused == 1)
        #expect(refusedOutput.notes.first?.hasPrefix("switchboard client: login failed") == true, "\(refusedOutput.notes)")
        await server.shutdown()
    }

    @Test func mistakesOnTheCommandLineAreUsageErrors() async throws {
        let printed = Printed()
        let verb = await #expect(throws: UsageError.self) { try await ClientCommand.run(["sbu", "room"], environment: [:], output: printed.output) }
        #expect(verb?.description.contains("did you mean 'sub'?") == true)
        let option = await #expect(throws: UsageError.self) {
            try await ClientCommand.run(["pub", "room", "x", "--app-id", "a", "--cuont", "2"], environment: [:], output: printed.output)
        }
        #expect(option?.description.contains("'--cuont'") == true)
        let arguments = await #expect(throws: UsageError.self) {
            try await ClientCommand.run(["pub", "room", "--app-id", "a"], environment: [:], output: printed.output)
        }
        #expect(arguments?.description.contains("takes CHANNEL TEXT") == true)
        // Nobody listens on the port: the login gives up at the timeout, exit code 1.
        let (status) = try await ClientCommand.run(
            ["login", "--url", "ws://127.0.0.1:1", "--app-id", "a", "--timeout", "1"], environment: [:], output: printed.output)
        #expect(status == 1)
    }
}
