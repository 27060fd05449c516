import Foundation
import Synchronization
import Testing
@testable import SwitchboardClient
import SwitchboardCore
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit

/// A request id an app gives its calls (`RtmRequestTrace`) reaches the server's log lines about
/// those requests, with the other ids in play, as JSON a log pipeline reads.
@Suite(.timeLimit(.minutes(1))) struct RequestTraceTests {
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        /// Every line, parsed.
        var objects: [[String: String]] {
            lines.withLock { $0 }.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String] }
        }
    }

    @Test func theRequestIdOfACallAppearsInTheServersLogLinesForIt() async throws {
        let lines = Lines()
        let server = try await TestServer.start(configure: { configuration in
            configuration.log = ServerLog(level: .debug, format: .json) { lines.append($0) }
        })
        let (client, _) = try makeClient("alice", server: server)
        expectOK(await client.login(""))
        expectOK(await RtmRequestTrace.$current.withValue("order-42") {
            await client.subscribe(channelName: "orders", option: nil)
        })
        expectOK(await RtmRequestTrace.$current.withValue("order-43") {
            await client.publish(channelName: "orders", message: "paid", option: nil)
        })
        // The completion-block form carries it through the call queue.
        let answered = OneShotFlag()
        RtmRequestTrace.$current.withValue("order-44") {
            client.unsubscribe("orders") { _, _ in answered.set() }
        }
        #expect(await eventually { answered.isSet })
        expectOK(await client.publish(channelName: "orders", message: "untraced", option: nil))

        let found = await eventually { lines.objects.contains { $0["requestId"] == "order-44" } }
        #expect(found)
        let traced = lines.objects.filter { $0["requestId"] != nil }
        #expect(traced.map { $0["message"] } == ["subscribe ok", "publish ok", "unsubscribe ok"])
        #expect(traced.map { $0["requestId"] } == ["order-42", "order-43", "order-44"])
        for line in traced {
            #expect(line["level"] == "debug" && line["module"] == "server")
            #expect(line["app"] == "test-app" && line["user"] == "alice" && line["channel"] == "orders")
            #expect(line["session"] != nil && line["connection"] != nil && line["time"] != nil)
        }
        // The call made outside any trace is logged without one.
        #expect(lines.objects.filter { $0["message"] == "publish ok" }.count == 2)
        _ = client.destroy()
        await server.shutdown()
    }
}

/// A flag set once, read from any thread.
final class OneShotFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
