import SwitchboardCore

/// A call to an extension module's operation: `{"t": "x.<name>", "id": …, "body": str|bin}`
/// (`body` may be absent: an empty string).
public struct ExtensionOperation: ClientOperationFamily {
    /// The channel it is about (for logs): none the server knows of.
    public var channelName: String? { nil }

    /// The operation's name, without the `x.` prefix.
    public var operation: String
    /// The argument.
    public var body: MessagePayload

    /// Creates a call of `operation` with `body`.
    public init(_ operation: String, body: MessagePayload = .string("")) {
        self.operation = operation
        self.body = body
    }

    /// The wire prefix of extension names, which no built-in operation or push uses.
    static let prefix = "x."

    public var name: String { Self.prefix + operation }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        guard head.type.hasPrefix(prefix) else { return nil }
        var body: MessagePayload = .string("")
        try reader.readFields(head) { key, reader throws(WireError) in
            guard key == .body else { return false }
            body = try reader.readPayload()
            return true
        }
        return ExtensionOperation(String(head.type.dropFirst(prefix.count)), body: body)
    }

    func encodeFields(_ frame: inout FrameWriter) {
        frame.field(.body) { $0.writePayload(body) }
    }
}

/// The answer of an extension operation: `{"t": "ok", "id": …, "result": "x.<name>", "body": …}`,
/// without `body` when the extension answered none.
public struct ExtensionAnswer: AnswerFamily {
    /// The operation's name, without the `x.` prefix.
    public var operation: String
    /// What the extension answered.
    public var body: MessagePayload?

    /// Creates an answer.
    public init(_ operation: String, body: MessagePayload?) {
        self.operation = operation
        self.body = body
    }

    var frameType: String { "ok" }

    func encodeFields(_ frame: inout FrameWriter) {
        frame.field(.result) { $0.writeString(ExtensionOperation.prefix + operation) }
        if let body { frame.field(.body) { $0.writePayload(body) } }
    }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        guard head.type == "ok", let result = head.result, result.hasPrefix(ExtensionOperation.prefix) else { return nil }
        var body: MessagePayload?
        try reader.readFields(head) { key, reader throws(WireError) in
            guard key == .body else { return false }
            body = try reader.readPayload()
            return true
        }
        return ExtensionAnswer(String(result.dropFirst(ExtensionOperation.prefix.count)), body: body)
    }
}

extension ExtensionPush: PushFamily {
    var frameType: String { ExtensionOperation.prefix + name }

    func encodeFrame() -> [UInt8] {
        var frame = FrameWriter(type: frameType, id: nil, capacity: 32 + name.utf8.count + body.byteCount)
        frame.field(.body) { $0.writePayload(body) }
        return frame.finish()
    }

    static func decode<Bytes>(_ head: FrameHead, _ reader: inout MessagePackReader<Bytes>) throws(WireError) -> Self? {
        guard head.type.hasPrefix(ExtensionOperation.prefix) else { return nil }
        var body: MessagePayload = .string("")
        try reader.readFields(head) { key, reader throws(WireError) in
            guard key == .body else { return false }
            body = try reader.readPayload()
            return true
        }
        return ExtensionPush(name: String(head.type.dropFirst(ExtensionOperation.prefix.count)), body: body)
    }
}

extension ExtensionOperation {
    /// The per-client call budget the operation draws on; nil when it draws on none.
    public var rateBudget: RateBudget? {
        .other
    }
}
