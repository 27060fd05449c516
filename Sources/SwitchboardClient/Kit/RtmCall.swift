import Dispatch
import SwitchboardWire
import SwitchboardCore

/// One SDK call, in both of the reference's forms: `result()` for `async` callers, returning
/// `(response, errorInfo)`, and `complete(_:)` for a completion block on the callback queue.
///
/// A call is issued in the order the app made it (completion-form calls go through the kit's
/// call queue), but never waits for the calls before it to be answered: a login that is still
/// retrying does not hold up a `logout`. Answers come back in the order the server sends them.
struct RtmCall<Response: Sendable>: Sendable {
    /// Issues the call on the engine and hands its outcome to the resolver, exactly once.
    typealias Issue = @Sendable (ClientEngine, @escaping @Sendable (Result<Response, RtmErrorInfo>) -> Void) async -> Void

    let kit: RtmClientKit
    let issue: Issue

    /// The `async` form.
    func result() async -> (Response?, RtmErrorInfo?) {
        if let refused = kit.refusedAfterDestroy() { return (nil, refused) }
        let outcome = OneShot<Result<Response, RtmErrorInfo>>()
        await issue(kit.engine) { outcome.fulfil($0) }
        return Self.pair(await outcome.value)
    }

    /// The completion-block form.
    func complete(_ block: (@Sendable (Response?, RtmErrorInfo?) -> Void)?) {
        let queue = kit.dispatcher.queue
        if let refused = kit.refusedAfterDestroy() {
            if let block { queue.async { block(nil, refused) } }
            return
        }
        let (engine, issue) = (kit.engine, issue)
        // The queue runs the call in a task of its own: the request id goes with it.
        let trace = RtmRequestTrace.current
        kit.calls.enqueue {
            await RtmRequestTrace.$current.withValue(trace) {
                await issue(engine) { outcome in
                    guard let block else { return }
                    let (response, error) = Self.pair(outcome)
                    queue.async { block(response, error) }
                }
            }
        }
    }

    /// The same call, followed, once it succeeded and before its outcome is handed on, by `next`
    /// on the engine (a subscribe sends the states kept for the channel).
    func followed(by next: @escaping @Sendable (ClientEngine) async -> Void) -> RtmCall {
        let issue = issue
        return RtmCall(kit: kit) { engine, resolve in
            await issue(engine) { outcome in
                guard case .success = outcome else { return resolve(outcome) }
                Task {
                    await next(engine)
                    resolve(outcome)
                }
            }
        }
    }

    private static func pair(_ outcome: Result<Response, RtmErrorInfo>) -> (Response?, RtmErrorInfo?) {
        switch outcome {
        case .success(let response): (response, nil)
        case .failure(let error): (nil, error)
        }
    }
}

extension RtmClientKit {
    /// A call that sends `operation` and makes its response from the answer (`respond` may
    /// throw `RtmErrorInfo` for an answer it cannot use). `prepare` runs first, in order with
    /// the app's calls, and may refuse the call (sealing a body, say).
    func call<Response: Sendable>(
        _ operation: @escaping @Sendable () throws(RtmErrorInfo) -> ClientOperation,
        respond: @escaping @Sendable (Answer) throws(RtmErrorInfo) -> Response
    ) -> RtmCall<Response> {
        RtmCall(kit: self) { engine, resolve in
            let request: ClientOperation
            do throws(RtmErrorInfo) {
                request = try operation()
            } catch {
                return resolve(.failure(error))
            }
            await engine.call(request) { outcome in
                resolve(outcome.flatMap { answer in Result { () throws(RtmErrorInfo) in try respond(answer) } })
            }
        }
    }

    /// A call whose success is the reference's common response for `channel`.
    func call(
        channel: String = "", _ operation: @escaping @Sendable () throws(RtmErrorInfo) -> ClientOperation
    ) -> RtmCall<RtmCommonResponse> {
        call(operation) { _ in RtmCommonResponse(channelName: channel) }
    }
}
