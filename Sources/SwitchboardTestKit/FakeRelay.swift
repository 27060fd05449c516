import Synchronization
import SwitchboardCore

/// A relay to other nodes (the cluster link), faked: it records what modules ask of it and
/// answers as told.
public final class FakeRelay: Module {
    public let name = "fake-relay"
    /// What `OpenRelay` and `OpenMetadataRelay` answer with: nil for ok, else the error.
    public let openFailure: RtmError?
    /// Whether another node takes a forwarded user message.
    public let someNodeTakesUsers: Bool
    private let asked = Mutex<(opened: [RelayTarget], closed: [RelayTarget], forwarded: [ForwardUserMessage], metadata: [MetadataTarget])>(
        ([], [], [], []))

    /// A relay that fails every `OpenRelay` and `OpenMetadataRelay` with `openFailure` (when
    /// given), and answers every forwarded user message with `someNodeTakesUsers`.
    public init(openFailure: RtmError? = nil, someNodeTakesUsers: Bool = true) {
        self.openFailure = openFailure
        self.someNodeTakesUsers = someNodeTakesUsers
    }

    /// The targets asked for, in order.
    public var opened: [RelayTarget] { asked.withLock { $0.opened } }
    /// The targets asked to close, in order.
    public var closed: [RelayTarget] { asked.withLock { $0.closed } }
    /// The user messages forwarded, in order.
    public var forwarded: [ForwardUserMessage] { asked.withLock { $0.forwarded } }
    /// The metadata sets asked for (`OpenMetadataRelay`), in order.
    public var openedMetadata: [MetadataTarget] { asked.withLock { $0.metadata } }

    public func start(_ context: ModuleContext) async {
        context.bus.handle(OpenRelay.self) { [self] request throws(RtmError) in
            asked.withLock { $0.opened.append(request.target) }
            if let openFailure { throw openFailure }
            return Done()
        }
        context.bus.handle(OpenMetadataRelay.self) { [self] request throws(RtmError) in
            asked.withLock { $0.metadata.append(request.target) }
            if let openFailure { throw openFailure }
            return Done()
        }
        context.bus.handle(CloseRelay.self) { [self] request in
            asked.withLock { $0.closed.append(request.target) }
            return Done()
        }
        context.bus.handle(ForwardUserMessage.self) { [self] request throws(RtmError) in
            asked.withLock { $0.forwarded.append(request) }
            return someNodeTakesUsers
        }
    }
}
