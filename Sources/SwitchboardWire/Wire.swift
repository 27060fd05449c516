/// The wire format shared by server and client: MessagePack maps in WebSocket binary frames.
public enum Wire {
    /// The WebSocket subprotocol a client must offer in `Sec-WebSocket-Protocol`.
    public static let subprotocol = "switchboard.v1"
    /// The largest WebSocket message either side accepts, in bytes (64 KiB + 1 KiB).
    public static let maxFrameSize = 64 * 1024 + 1024
    /// How many arrays and maps may nest inside each other in one decoded value.
    public static let maxNestingDepth = 32
}
