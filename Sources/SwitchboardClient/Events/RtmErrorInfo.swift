import Foundation
import SwitchboardCore

/// What went wrong with a call (`AgoraRtmErrorInfo`): the error code, the operation and a reason.
///
/// An `NSError`, as in the reference: its `domain` is `RtmErrorInfo.domain`, its `code` the
/// error code's raw value and its `localizedDescription` the reason with the operation.
public final class RtmErrorInfo: NSError, @unchecked Sendable {
    // Sendable proof: `NSError` is `@unchecked Sendable` already, and the compiler asks a subclass
    // to restate it. The three stored properties are immutable `let`s of Sendable types, set
    // before `super.init`; what `NSError` itself stores (domain, code, a user info of strings)
    // is fixed by that init and never changed afterwards.

    /// The `domain` of every `RtmErrorInfo`.
    public static let domain = "SwitchboardRtmErrorDomain"

    /// The reference's error code.
    public let errorCode: RtmErrorCode
    /// The API that failed.
    public let operation: String
    /// A short human-readable reason.
    public let reason: String

    /// Creates an error.
    public init(_ errorCode: RtmErrorCode, operation: String, reason: String) {
        self.errorCode = errorCode
        self.operation = operation
        self.reason = reason
        super.init(
            domain: Self.domain, code: errorCode.rawValue,
            userInfo: [NSLocalizedDescriptionKey: "\(operation) failed: \(reason)"])
    }

    /// An error of the operation a table names (`OperationName.Stream.join` …).
    convenience init(_ errorCode: RtmErrorCode, operation: some OperationNameTable, reason: String) {
        self.init(errorCode, operation: operation.rawValue, reason: reason)
    }

    /// Wraps a core error.
    public convenience init(_ error: RtmError) {
        self.init(error.code, operation: error.operation, reason: error.reason)
    }

    /// Not supported: an `RtmErrorInfo` is never archived.
    public required init?(coder: NSCoder) { nil }

    public override var description: String { "\(operation) failed: \(errorCode) (\(errorCode.rawValue)): \(reason)" }
}

/// The response of a call that succeeded (`AgoraRtmCommonResponse`).
public final class RtmCommonResponse: NSObject, Sendable {
    /// The channel the call was about; empty when none.
    public let channelName: String
    /// Local time of the response, milliseconds since 1970.
    public let timestamp: UInt64

    /// Creates a response.
    public init(channelName: String = "", timestamp: UInt64 = UInt64(Date().timeIntervalSince1970 * 1000)) {
        self.channelName = channelName
        self.timestamp = timestamp
    }
}

/// The completion block of an asynchronous call (`AgoraRtmOperationBlock`).
public typealias RtmOperationBlock = @Sendable (RtmCommonResponse?, RtmErrorInfo?) -> Void
