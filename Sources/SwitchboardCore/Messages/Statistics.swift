/// What a module counts of its state, for one app or every app together (`app` nil): asked by
/// the server for its `info` and its `/metrics` scrape, when they are read, never on a message's
/// path. One request type per kind of counts (`SessionStatistics`, `LockStatistics` …), so each
/// has its one handler, the module that keeps those counts.
public struct Statistics<Counts: Sendable>: BusRequest {
    public typealias Response = Counts
    public static var operation: String { OperationName.Server.statistics.rawValue }
    /// The app counted; nil counts every app.
    public var app: AppID?
    /// Creates the query.
    public init(app: AppID? = nil) { self.app = app }
}
