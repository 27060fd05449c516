extension OperationName {
    /// The client's life: creating it, logging in and out, staying alive, renewing its token.
    public enum Session: String, OperationNameTable {
        /// Creating the client (`RtmClientKit(config:delegate:)`), the SDK's own checks.
        case initialize
        /// `login`.
        case login
        /// `logout`.
        case logout
        /// A sign of life (Switchboard's own; the reference's SDK sends it unasked).
        case heartbeat
        /// `renewToken` of the client.
        case renewToken
    }
}
