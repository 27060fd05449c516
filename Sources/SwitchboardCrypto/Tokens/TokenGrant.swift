/// What a verified login token allows.
public struct TokenGrant: Sendable, Hashable {
    /// The token formats Switchboard accepts.
    public enum Format: String, Sendable, Hashable {
        /// `006`, Agora AccessToken.
        case accessToken006 = "006"
        /// `007`, Agora AccessToken2.
        case accessToken007 = "007"
    }

    /// The format the token was in.
    public let format: Format
    /// When the login privilege ends, in Unix seconds; `nil` when it never does.
    public let loginExpiresAt: UInt64?

    /// Creates a grant.
    public init(format: Format, loginExpiresAt: UInt64?) {
        self.format = format
        self.loginExpiresAt = loginExpiresAt
    }
}
