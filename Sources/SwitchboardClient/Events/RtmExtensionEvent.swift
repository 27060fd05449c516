import Foundation
import SwitchboardCore

/// A push from an extension module of the server, or the answer of its operation (a Switchboard
/// extension: the reference has no extension modules).
public final class RtmExtensionEvent: NSObject, Sendable {
    /// The push's or operation's name, as the module registered it (without the wire's `x.`).
    public let name: String
    /// The content, as the module defines it; nil for an answer without one.
    public let body: RtmMessage?

    /// Creates an event.
    public init(name: String, body: RtmMessage?) {
        self.name = name
        self.body = body
    }
}
