/// Where a request's answer goes once its handler has it: called once, on any thread.
public typealias Reply<R: BusRequest> = @Sendable (Result<R.Response, RtmError>) -> Void

/// What became of a request offered to `EventBus.answerAtOnceOrStart`.
public enum ImmediateOutcome<Response> {
    /// Answered on the caller's thread.
    case answered(Response)
    /// Started: the reply the caller made gets the answer later.
    case started
    /// Neither: send it with `EventBus.request`.
    case mustWait
}

extension ImmediateOutcome: Sendable where Response: Sendable {}
