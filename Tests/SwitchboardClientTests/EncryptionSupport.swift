import Foundation
import Synchronization
@testable import SwitchboardClient
import SwitchboardCore
import SwitchboardMessageRouter

/// The built-in message router, with a tap on its outbox that records every message body exactly
/// as the server routes it: the body a `publish` brought to the server, passed through untouched.
struct TappedRouter: Module {
    /// The bodies seen so far, in order.
    final class Tap: Sendable {
        private let recorded = Mutex<[MessagePayload]>([])
        var payloads: [MessagePayload] { recorded.withLock { $0 } }
        func record(_ payload: MessagePayload) { recorded.withLock { $0.append(payload) } }
    }

    let name = "tapped-message-router"
    let tap = Tap()
    private let inner = MessageRouter()

    func start(_ context: ModuleContext) async {
        let outbox = TappedOutbox(inner: context.outbox, tap: tap)
        await inner.start(
            ModuleContext(bus: context.bus, clock: context.clock, limits: context.limits, outbox: outbox, log: context.log))
    }

    func run() async throws { try await inner.run() }
}

/// Forwards everything to the server's outbox, recording message bodies on the way.
private struct TappedOutbox: Outbox {
    let inner: any Outbox
    let tap: TappedRouter.Tap

    func deliver(_ push: Push, to sessions: [SessionID]) {
        if case .message(let delivery) = push { tap.record(delivery.payload) }
        inner.deliver(push, to: sessions)
    }

    func open(_ session: SessionID) { inner.open(session) }

    func release(_ session: SessionID) { inner.release(session) }

    func disconnect(_ session: SessionID, reason: RtmLinkStateChangeReason, detail: String) {
        inner.disconnect(session, reason: reason, detail: detail)
    }
}

/// A fixed 32-byte salt for tests.
let testSalt = Data((0..<32).map { UInt8($0 &* 7 &+ 3) })

/// A `makeClient` configuration that turns on client-side encryption.
func encrypted(
    _ mode: RtmEncryptionMode, key: String = "correct horse battery staple", salt: Data = testSalt
) -> (RtmClientConfig) -> Void {
    { config in
        let encryption = RtmEncryptionConfig()
        encryption.encryptionMode = mode
        encryption.encryptionKey = key
        encryption.encryptionKdfSalt = salt
        config.encryptionConfig = encryption
    }
}

/// The payload of a received message event.
func payload(of event: RtmMessageEvent) -> MessagePayload {
    if let text = event.message.stringData { return .string(text) }
    return .binary(Array(event.message.rawData ?? Data()))
}

/// Whether `needle` occurs as a contiguous run inside `haystack`.
func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, needle.count <= haystack.count else { return needle.isEmpty }
    return (0...(haystack.count - needle.count)).contains { start in
        haystack[start..<(start + needle.count)].elementsEqual(needle)
    }
}

/// Lowercase hex.
func hex(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}
