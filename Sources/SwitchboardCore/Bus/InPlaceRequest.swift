/// A request whose values lie in memory its caller lends for one call, answered on the caller's
/// thread or not at all: a client's frame read where the connection received it.
///
/// It is not `Sendable` and is lent to its handler, which must not keep any part
/// of it after returning: the bytes it points to are the caller's and change once the call
/// returns. A handler answers it without suspending, or returns nil having changed nothing, and
/// the caller then sends the owned request (`owned`) the ordinary way.
public protocol InPlaceRequest {
    /// The same request owning copies of its values: what the caller sends when no handler
    /// answers in place.
    associatedtype Owned: BusRequest
    /// What the handler answers (the owned request's answer).
    typealias Response = Owned.Response
    /// The owned request.
    func owned() -> Owned
}

extension EventBus {
    /// Makes `handler` the one handler of requests of type `R` read in place, replacing any
    /// earlier one. It runs on the caller's thread, must be quick and must never wait; it answers,
    /// or returns nil, having changed nothing, for a request it leaves to the owned request's
    /// handler. A bus without one answers none in place.
    public func handleInPlace<R: InPlaceRequest>(
        _ type: R.Type, _ handler: @escaping @Sendable (R) throws(RtmError) -> R.Response?
    ) {
        register(InPlaceHandler<R>(handler), for: ObjectIdentifier(type))
    }

    /// Whether a handler answers requests of type `R` in place.
    public func hasHandler<R: InPlaceRequest>(_ type: R.Type) -> Bool {
        handlerUnretained(for: ObjectIdentifier(type)) != nil
    }

    /// Answers `request` on the calling thread when a handler of `R` answers it in place; nil when
    /// there is none or it left this one (send `request.owned()` then). Inlined into the caller,
    /// so it is specialised for `R` there, and the handler is taken without retaining it.
    @inlinable
    public func answerInPlace<R: InPlaceRequest>(_ request: R) throws(RtmError) -> R.Response? {
        guard let found = handlerUnretained(for: ObjectIdentifier(R.self)) else { return nil }
        // The box under R's identifier is an InPlaceHandler<R> (`handleInPlace` puts it there).
        let answer: Result<R.Response?, RtmError> = found._withUnsafeGuaranteedRef { box in
            do throws(RtmError) {
                return .success(try unsafeDowncast(box, to: InPlaceHandler<R>.self).answer(request))
            } catch {
                return .failure(error)
            }
        }
        return try answer.get()
    }
}

@usableFromInline
final class InPlaceHandler<R: InPlaceRequest>: AnyRequestHandler, @unchecked Sendable {
    // Sendable proof: its one stored property is an immutable `let` of a Sendable closure type.
    @usableFromInline let answer: @Sendable (R) throws(RtmError) -> R.Response?

    init(_ answer: @escaping @Sendable (R) throws(RtmError) -> R.Response?) {
        self.answer = answer
    }
}
