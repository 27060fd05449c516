import SwitchboardCore

/// One event as receivers get it: `{"id", "type", "app", "time", …fields}`, one JSON object.
public struct WebhookEvent: Sendable, Hashable {
    /// Unique per event, the same in every retry and for every receiver: the key to deduplicate on.
    public var id: String
    /// What happened.
    public var type: WebhookEventType
    /// The app it happened in.
    public var app: AppID
    /// When it happened, milliseconds since 1970.
    public var time: WallClockTime
    /// The event's own fields, in the order they are written.
    public var fields: [WebhookField]

    /// Creates an event.
    public init(id: String, type: WebhookEventType, app: AppID, time: WallClockTime, fields: [WebhookField]) {
        self.id = id
        self.type = type
        self.app = app
        self.time = time
        self.fields = fields
    }

    /// The JSON body, UTF-8.
    public var body: [UInt8] {
        var text = "{\"id\":\(JSONQuoting.quoted(id)),\"type\":\(JSONQuoting.quoted(type.rawValue))"
        text += ",\"app\":\(JSONQuoting.quoted(app)),\"time\":\(time.millisecondsSince1970)"
        for field in fields { text += ",\(JSONQuoting.quoted(field.name)):\(field.value.json)" }
        return Array((text + "}").utf8)
    }
}

/// A named value of an event.
public struct WebhookField: Sendable, Hashable {
    /// The JSON member's name.
    public var name: String
    /// Its value.
    public var value: WebhookValue
    /// Creates a field.
    public init(_ name: String, _ value: WebhookValue) {
        self.name = name
        self.value = value
    }
}

/// The values event fields take.
public enum WebhookValue: Sendable, Hashable {
    /// A JSON string.
    case string(String)
    /// A JSON integer.
    case integer(Int64)
    /// A JSON object of strings, written with its keys sorted.
    case strings([String: String])

    var json: String {
        switch self {
        case .string(let text): JSONQuoting.quoted(text)
        case .integer(let number): "\(number)"
        case .strings(let values):
            "{" + values.sorted { $0.key < $1.key }.map { "\(JSONQuoting.quoted($0.key)):\(JSONQuoting.quoted($0.value))" }
                .joined(separator: ",") + "}"
        }
    }
}
