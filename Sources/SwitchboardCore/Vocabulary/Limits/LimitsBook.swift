/// The limits in force: the server's, each app's own, and which apps are served. A module asks it
/// once per request with the caller's app (`ModuleContext.limits(for:)`) and keeps what it got
/// for the rest of that request; a reload (SIGHUP) replaces the whole edition at once, so a
/// request sees one edition from start to end and every request that starts after the reload sees
/// the new one.
public final class LimitsBook: Sendable {
    /// One edition of the book: what a reload replaces whole.
    public struct Edition: Sendable, Equatable {
        /// The limits of every app without its own.
        public var server: Limits
        /// The limits of the apps that have their own: the server's with the app's values over them.
        public var apps: [AppID: Limits]
        /// The app ids served; nil serves any (development).
        public var served: Set<AppID>?

        /// An edition with `server`'s limits for every app but those in `apps`, serving `served`.
        public init(server: Limits = Limits(), apps: [AppID: Limits] = [:], served: Set<AppID>? = nil) {
            self.server = server
            self.apps = apps
            self.served = served
        }

        /// The limits of `app`: its own, else the server's.
        public func limits(for app: AppID) -> Limits { apps[app] ?? server }

        /// Whether `app` is served.
        public func serves(_ app: AppID) -> Bool { served?.contains(app) ?? true }
    }

    /// An edition, shared by reference so a reader copies nothing while it holds the lock.
    private final class Shared: Sendable {
        let edition: Edition
        init(_ edition: Edition) { self.edition = edition }
    }

    private let current: PortableMutex<Shared>

    /// A book holding `edition`.
    public init(_ edition: Edition = Edition()) {
        current = PortableMutex(Shared(edition))
    }

    /// A book of one set of limits for every app, serving any.
    public convenience init(limits: Limits) {
        self.init(Edition(server: limits))
    }

    /// The edition in force.
    public var edition: Edition { shared.edition }

    /// The limits of apps without their own, and of what belongs to no app.
    public var server: Limits { shared.edition.server }

    /// The limits of `app`: its own, else the server's. Read once per request.
    public func limits(for app: AppID) -> Limits { shared.edition.limits(for: app) }

    /// What `read` finds in the limits of `app`, without copying them (a connection's call rate).
    public func reading<Value>(for app: AppID, _ read: (Limits) -> Value) -> Value {
        let shared = self.shared
        if let own = shared.edition.apps[app] { return read(own) }
        return read(shared.edition.server)
    }

    /// Whether `app` is served.
    public func serves(_ app: AppID) -> Bool { shared.edition.serves(app) }

    /// Puts `edition` in force for every request that starts from now on.
    public func replace(with edition: Edition) {
        let next = Shared(edition)
        current.withLock { $0 = next }
    }

    /// Puts `limits` in force as the server's, keeping the apps' own and the apps served.
    public func replaceServerLimits(with limits: Limits) {
        current.withLock { shared in
            var edition = shared.edition
            edition.server = limits
            shared = Shared(edition)
        }
    }

    private var shared: Shared { current.withLock { $0 } }
}
