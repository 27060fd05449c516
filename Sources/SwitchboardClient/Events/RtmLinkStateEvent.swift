import Foundation
import SwitchboardCore

/// A change of the client's link state (`AgoraRtmLinkStateEvent`).
public final class RtmLinkStateEvent: NSObject, Sendable {
    /// The state now.
    public let currentState: RtmLinkState
    /// The state before.
    public let previousState: RtmLinkState
    /// Which connection changed.
    public let serviceType: RtmServiceType
    /// The operation that caused the change.
    public let operation: RtmLinkOperation
    /// Why it changed.
    public let reasonCode: RtmLinkStateChangeReason
    /// Why it changed, in words (deprecated in the reference; use `reasonCode`).
    public let reason: String
    /// The channels the change affects.
    public let affectedChannels: [String]
    /// The channels whose subscription could not be restored.
    public let unrestoredChannels: [String]
    /// Whether the session was resumed after a disconnection.
    public let isResumed: Bool
    /// When the change happened, milliseconds since 1970.
    public let timestamp: UInt64

    /// Creates an event.
    public init(
        currentState: RtmLinkState, previousState: RtmLinkState, serviceType: RtmServiceType = .message,
        operation: RtmLinkOperation, reasonCode: RtmLinkStateChangeReason, reason: String = "",
        affectedChannels: [String] = [], unrestoredChannels: [String] = [], isResumed: Bool = false,
        timestamp: UInt64 = UInt64(Date().timeIntervalSince1970 * 1000)
    ) {
        self.currentState = currentState
        self.previousState = previousState
        self.serviceType = serviceType
        self.operation = operation
        self.reasonCode = reasonCode
        self.reason = reason.isEmpty ? "\(reasonCode)" : reason
        self.affectedChannels = affectedChannels
        self.unrestoredChannels = unrestoredChannels
        self.isResumed = isResumed
        self.timestamp = timestamp
    }
}
