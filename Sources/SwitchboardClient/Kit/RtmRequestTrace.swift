import SwitchboardWire

/// A request id for logs: the calls made inside `RtmRequestTrace.$current.withValue("…") { … }`
/// carry it to the server (the frame's `"trace"`, up to 64 bytes), which writes it in its log
/// lines about those requests, so an app's logs and the server's meet.
///
/// ```swift
/// await RtmRequestTrace.$current.withValue("checkout-42") {
///     _ = await client.publish(channelName: "orders", message: "paid", option: nil)
/// }
/// ```
public enum RtmRequestTrace {
    /// The request id of the calls made in this task; nil for none.
    @TaskLocal public static var current: String?

    /// `trace` cut to the longest the wire carries, whole characters only.
    static func fitted(_ trace: String) -> String {
        var fitted = trace
        while fitted.utf8.count > ClientFrame.maxTraceBytes { fitted.removeLast() }
        return fitted
    }
}
