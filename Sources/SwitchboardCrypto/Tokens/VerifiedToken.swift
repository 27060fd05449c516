import SwitchboardCore

/// A login token that passed verification: the format it was in and what it grants.
public struct VerifiedToken: Sendable, Hashable {
    /// The token formats Switchboard accepts.
    public enum Format: String, Sendable, Hashable {
        /// `006`, Agora AccessToken.
        case accessToken006 = "006"
        /// `007`, Agora AccessToken2.
        case accessToken007 = "007"
    }

    /// The format the token was in.
    public let format: Format
    /// What the token allows.
    public let grant: TokenGrant

    /// Creates a verified token.
    public init(format: Format, grant: TokenGrant) {
        self.format = format
        self.grant = grant
    }
}
