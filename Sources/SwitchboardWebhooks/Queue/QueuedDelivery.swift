import SwitchboardCore

/// One event on its way to one receiver: what waits in the queue until the receiver takes it, or
/// its retry window ends.
public struct QueuedDelivery: Sendable, Hashable {
    /// Its place in the queue: deliveries to a receiver go in this order.
    public var sequence: Int64
    /// The event's id (the same for every receiver of the event).
    public var eventId: String
    /// The receiver's URL.
    public var target: String
    /// The JSON body, as signed and sent.
    public var body: [UInt8]
    /// When the event happened; the retry window counts from here.
    public var created: WallClockTime

    /// Creates a delivery.
    public init(sequence: Int64, eventId: String, target: String, body: [UInt8], created: WallClockTime) {
        self.sequence = sequence
        self.eventId = eventId
        self.target = target
        self.body = body
        self.created = created
    }
}
