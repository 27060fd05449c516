import SwitchboardCore

/// A server API call that failed: the reference's error code and name, the method, a reason,
/// and the HTTP status that fits the code.
struct APIFailure: Error, Sendable, Equatable {
    /// The HTTP status.
    let status: Int
    /// The reference's error code.
    let code: RtmErrorCode
    /// The method (or the module's operation) that failed.
    let operation: String
    /// A human reason.
    let reason: String

    init(status: Int, _ code: RtmErrorCode, operation: String, reason: String) {
        self.status = status
        self.code = code
        self.operation = operation
        self.reason = reason
    }

    /// A module's refusal, with the status its code calls for.
    init(_ error: RtmError) {
        self.init(status: Self.status(of: error.code), error.code, operation: error.operation, reason: error.reason)
    }

    /// A parameter that is missing, of the wrong kind or out of range: 400 `invalidParameter`.
    static func invalid(_ operation: String, _ reason: String) -> APIFailure {
        APIFailure(status: 400, .invalidParameter, operation: operation, reason: reason)
    }

    /// The body of the answer: `{"code":…,"error":"<name>","operation":…,"reason":…}`.
    var json: JSONValue {
        .object([("code", .int(code.rawValue)), ("error", .string("\(code)")), ("operation", .string(operation)), ("reason", .string(reason))])
    }

    /// The HTTP status of a module's error code: 400 for what the caller can correct, 404 for
    /// what is not there, 409 for a revision or lock conflict, 429 for a rate, 501 for a
    /// feature this server does not run, 503 for a part not ready, 504 for a timeout, 500 for
    /// a failure of the server's own.
    static func status(of code: RtmErrorCode) -> Int {
        switch code {
        case .storageOutdatedRevision, .lockAlreadyExist, .lockOperationPerforming, .lockAcquireFailed, .duplicateOperation:
            409
        case .operationRateExceedLimitation, .channelSubscribeTooFrequent: 429
        case .loginNotAuthorized: 401
        case .presenceUserNotExist, .lockNotExist, .channelNotSubscribed, .channelNotJoined, .channelTopicNotExist:
            404
        case .serviceNotSupport: 501
        case .notInitialized, .notConnected, .storageNotAvailable, .lockNotAvailable, .presenceNotConnected, .channelPresenceNotReady:
            503
        case .storageOperationTimeout, .presenceOperationTimeout, .lockOperationTimeout, .channelPublishMessageTimeout:
            504
        case .initServiceFailed, .storageOperationFailed, .presenceOperationFailed: 500
        default: 400
        }
    }
}
