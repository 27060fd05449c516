/// A client's call to an operation of an extension module: a module the built-in features do not
/// know, added by an embedding app (`"t": "x.<name>"` on the wire).
public struct ExtensionCall: Sendable, Hashable {
    /// Who calls.
    public var caller: Caller
    /// The operation's name, without the wire's `x.` prefix.
    public var name: String
    /// The argument, as the extension defines it (a string or bytes).
    public var body: MessagePayload
    /// Creates a call.
    public init(caller: Caller, name: String, body: MessagePayload) {
        self.caller = caller
        self.name = name
        self.body = body
    }
}

/// A push from an extension module (`"t": "x.<name>"` on the wire).
public struct ExtensionPush: Sendable, Hashable {
    /// The push's name, without the wire's `x.` prefix.
    public var name: String
    /// The content, as the extension defines it.
    public var body: MessagePayload
    /// Creates a push.
    public init(name: String, body: MessagePayload) {
        self.name = name
        self.body = body
    }
}

/// What handles an extension operation: its answer's body, or nil for none.
public typealias ExtensionHandler = @Sendable (ExtensionCall) async throws(RtmError) -> MessagePayload?

/// The extension operations registered on a bus, by name.
///
/// Built-in features are typed end to end (an enum case per operation, checked exhaustively); an
/// extension module added by an embedding app cannot add cases to those enums, so its operations
/// are routed by name here. Names are 1–64 characters of `A–Z a–z 0–9 . _ -`.
final class ExtensionDirectory: Sendable {
    /// A handler in a struct: the table's values, and what a lookup takes out of the lock, are
    /// never the bare function type, whose typed `throws` would need the type metadata only
    /// Swift 6 runtimes have (macOS 15 / iOS 18, above the SDK's floor).
    private struct Entry: Sendable {
        let handler: ExtensionHandler
    }

    private let handlers = PortableMutex<[String: Entry]>([:])

    func handle(_ name: String, _ handler: @escaping ExtensionHandler) {
        precondition(Self.isValid(name), "extension operation names are 1-64 characters of A-Z a-z 0-9 . _ -")
        handlers.withLock { $0[name] = Entry(handler: handler) }
    }

    func handler(_ name: String) -> ExtensionHandler? {
        let entry = handlers.withLock { $0[name] }
        return entry?.handler
    }

    func removeAll() { handlers.withLock { $0.removeAll() } }

    /// Whether `name` may name an extension operation.
    static func isValid(_ name: String) -> Bool {
        let bytes = name.utf8
        return (1...64).contains(bytes.count)
            && bytes.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2E || byte == 0x5F || byte == 0x2D
            }
    }
}

extension EventBus {
    /// Makes `handler` answer the extension operation `name` (replacing an earlier handler).
    public func handleExtension(_ name: String, _ handler: @escaping ExtensionHandler) {
        extensions.handle(name, handler)
    }

    /// Carries out an extension call. Throws `serviceNotSupport` when no module handles its name.
    public func callExtension(_ call: ExtensionCall) async throws(RtmError) -> MessagePayload? {
        guard let handler = extensions.handler(call.name) else {
            throw RtmError(.serviceNotSupport, operation: "x.\(call.name)", reason: "no module handles x.\(call.name)")
        }
        return try await handler(call)
    }
}
