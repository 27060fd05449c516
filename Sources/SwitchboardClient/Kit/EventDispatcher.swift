import Dispatch
import Foundation
import SwitchboardCore

/// Hands the client's events to its delegates and `events` streams, in order, on the callback queue.
final class EventDispatcher: Sendable {
    private struct KitReference: Sendable { weak var kit: RtmClientKit? }

    let queue: DispatchQueue
    private let delegates = DelegateRegistry()
    private let kit = Locked(KitReference())
    private let streams = Locked<[UInt64: AsyncStream<RtmEvent>.Continuation]>([:])
    private let nextStream = Locked<UInt64>(0)

    /// Serialises callbacks on a private queue that targets `callbackQueue` when one is given.
    init(callbackQueue: DispatchQueue?) {
        queue = DispatchQueue(label: "switchboard.client.callbacks", target: callbackQueue)
    }

    func bind(_ kit: RtmClientKit) { self.kit.withLock { $0.kit = kit } }

    func add(_ delegate: any RtmClientDelegate) { delegates.add(delegate) }

    func remove(_ delegate: any RtmClientDelegate) { delegates.remove(delegate) }

    /// A new stream of every event from now on.
    func makeStream() -> AsyncStream<RtmEvent> {
        let (stream, continuation) = AsyncStream<RtmEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = nextStream.withLock { next in
            next &+= 1
            return next
        }
        streams.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.streams.withLock { _ = $0.removeValue(forKey: id) }
        }
        return stream
    }

    /// Delivers `event` to every delegate and stream, after every event emitted before it.
    func emit(_ event: RtmEvent) {
        queue.async { [self] in
            let continuations = streams.withLock { Array($0.values) }
            for continuation in continuations { continuation.yield(event) }
            guard let kit = kit.withLock({ $0.kit }) else { return }
            for delegate in delegates.snapshot() {
                switch event {
                case .message(let message): delegate.rtmKit(kit, didReceiveMessageEvent: message)
                case .linkState(let change): delegate.rtmKit(kit, didReceiveLinkStateEvent: change)
                case .tokenPrivilegeWillExpire(let channel): delegate.rtmKit(kit, tokenPrivilegeWillExpire: channel)
                case .messagesMayBeLost(let type, let channel): delegate.rtmKit(kit, messagesMayBeLostIn: channel, channelType: type)
                case .extension(let push): delegate.rtmKit(kit, didReceiveExtensionEvent: push)
                case .topic(let event): delegate.rtmKit(kit, didReceiveTopicEvent: event)
                case .presence(let event): delegate.rtmKit(kit, didReceivePresenceEvent: event)
                case .storage(let storage): delegate.rtmKit(kit, didReceiveStorageEvent: storage)
                case .lock(let event): delegate.rtmKit(kit, didReceiveLockEvent: event)
                }
            }
        }
    }

    /// Ends every stream.
    func finish() {
        queue.async { [self] in
            let continuations = streams.withLock { state in
                defer { state.removeAll() }
                return Array(state.values)
            }
            for continuation in continuations { continuation.finish() }
        }
    }
}

/// The delegates of one client, held weakly as the reference does.
///
/// `@unchecked Sendable` is safe here: the only stored state is `entries`, and every read and write
/// of it happens inside `lock`. The delegate objects themselves are only called on the client's
/// serial callback queue (see `EventDispatcher.emit`), which is the reference's threading contract.
private final class DelegateRegistry: @unchecked Sendable {
    private struct Entry { weak var delegate: (any RtmClientDelegate)? }

    private let lock = NSLock()
    private var entries: [Entry] = []

    func add(_ delegate: any RtmClientDelegate) {
        lock.withLock {
            entries.removeAll { $0.delegate == nil || $0.delegate === delegate }
            entries.append(Entry(delegate: delegate))
        }
    }

    func remove(_ delegate: any RtmClientDelegate) {
        lock.withLock { entries.removeAll { $0.delegate == nil || $0.delegate === delegate } }
    }

    func snapshot() -> [any RtmClientDelegate] {
        lock.withLock { entries.compactMap(\.delegate) }
    }
}
