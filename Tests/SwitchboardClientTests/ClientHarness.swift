import Foundation
import Synchronization
import Testing
@testable import SwitchboardClient
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardCore

/// Collects a client's events (from the `events` stream) and waits for the ones a test expects.
final class EventLog: Sendable {
    private final class Store: Sendable {
        let events = Mutex<[RtmEvent]>([])
    }

    private let store = Store()
    private let reader: Task<Void, Never>

    init(_ client: RtmClientKit) {
        let stream = client.events
        let store = store
        reader = Task {
            for await event in stream { store.events.withLock { $0.append(event) } }
        }
    }

    var all: [RtmEvent] { store.events.withLock { $0 } }

    var messages: [RtmMessageEvent] {
        all.compactMap { if case .message(let message) = $0 { message } else { nil } }
    }

    var linkStates: [RtmLinkStateEvent] {
        all.compactMap { if case .linkState(let change) = $0 { change } else { nil } }
    }

    /// Waits (real time, bounded) until `condition` holds; returns whether it did.
    @discardableResult
    func wait(timeout: Duration = Patience.standard, until condition: (EventLog) -> Bool) async -> Bool {
        await eventually(within: timeout) { condition(self) }
    }

    deinit { reader.cancel() }
}

/// The transport the end-to-end tests' clients use: URLSession when `SWITCHBOARD_SDK_TRANSPORT`
/// is `urlSession` (tools/test-sdk-urlsession.sh runs the suite so), else the platform's default.
let harnessTransport: RtmTransport =
    ProcessInfo.processInfo.environment["SWITCHBOARD_SDK_TRANSPORT"] == "urlSession" ? .urlSession : .automatic

/// A client of `server` for `userId`, with its event log.
func makeClient(
    _ userId: String, server: SwitchboardServer, clock: (any SwitchboardClock)? = nil,
    configure: (RtmClientConfig) -> Void = { _ in }
) throws -> (RtmClientKit, EventLog) {
    let config = RtmClientConfig(appId: "test-app", userId: userId)
    let privateConfig = RtmPrivateConfig()
    privateConfig.accessPointHosts = [server.url]
    privateConfig.transport = harnessTransport
    config.privateConfig = privateConfig
    configure(config)
    let client = try RtmClientKit(config, delegate: nil, clock: clock ?? SystemClock())
    return (client, EventLog(client))
}

/// Publishes a message in `channel` from `sender` and waits until every one of `logs` has it.
/// A client's events come in the order the server sent them, so whatever was on its way to
/// those clients before the message has come: the positive control of a check that nothing more
/// arrived. Returns the message's text, which the logs now end with.
@discardableResult
func fence(
    _ channel: String, from sender: RtmClientKit, to logs: [EventLog], sourceLocation: SourceLocation = #_sourceLocation
) async -> String {
    let text = "fence \(UInt64.random(in: 0...UInt64.max))"
    expectOK(await sender.publish(channelName: channel, message: text, option: nil), sourceLocation: sourceLocation)
    for log in logs {
        let arrived = await log.wait { $0.messages.contains { $0.message.stringData == text } }
        #expect(arrived, "a client did not get the fence", sourceLocation: sourceLocation)
    }
    return text
}

/// Fails the test when a call answered an error.
func expectOK(
    _ result: (RtmCommonResponse?, RtmErrorInfo?), sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(result.1 == nil, "\(result.1.map(\.description) ?? "")", sourceLocation: sourceLocation)
    #expect(result.0 != nil, sourceLocation: sourceLocation)
}

/// Fails the test unless a call answered `code`.
func expectError(
    _ code: RtmErrorCode, _ result: (RtmCommonResponse?, RtmErrorInfo?),
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(result.0 == nil, sourceLocation: sourceLocation)
    #expect(result.1?.errorCode == code, "got \(result.1.map(\.description) ?? "success")", sourceLocation: sourceLocation)
}
