extension SwitchboardServer {
    /// This server's version, as the server API's `info` reports it.
    public static let version = "0.1.0"
}
