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

    /// An edition, shared by reference so a reader copies nothing.
    private final class Shared: Sendable {
        let edition: Edition
        init(_ edition: Edition) { self.edition = edition }
    }

    /// Every edition put in force, oldest first, kept for the book's life: a replacement that
    /// changes something adds one, about a kilobyte with the apps' own, and an operator makes them
    /// by hand (a reload). Only writers take the lock.
    private let editions: PortableMutex<[Shared]>
    /// The address of the newest of `editions`, which readers go through without the lock and
    /// without retaining it: every address it ever holds is of an edition `editions` keeps as long
    /// as the book lives, and a reader holds the book. Stored (releasing) after the edition is in
    /// `editions`, loaded acquiring, so a reader sees the edition whole.
    private let newest: PortableAtomic<UInt>
    /// How many times an edition was put in force since the book was made: bumped after each
    /// replacement, so a reader that finds the number it saw last may keep what it read then.
    private let replacements = PortableAtomic<UInt64>(0)

    /// A book holding `edition`.
    public init(_ edition: Edition = Edition()) {
        let first = Shared(edition)
        editions = PortableMutex([first])
        newest = PortableAtomic(UInt(bitPattern: Unmanaged.passUnretained(first).toOpaque()))
    }

    /// A book of one set of limits for every app, serving any.
    public convenience init(limits: Limits) {
        self.init(Edition(server: limits))
    }

    /// The edition in force.
    public var edition: Edition { withNewest { copy $0 } }

    /// The limits of apps without their own, and of what belongs to no app.
    public var server: Limits { withNewest { edition in edition.server } }

    /// The limits of `app`: its own, else the server's. Read once per request.
    public func limits(for app: AppID) -> Limits { withLimits(for: app) { $0 } }

    /// What `read` finds in the limits of `app`, without copying them (a connection's call rate).
    public func reading<Value>(for app: AppID, _ read: (Limits) -> Value) -> Value {
        withLimits(for: app, read)
    }

    /// Runs `body` on the limits of `app` where they lie, in the edition in force: no lock, no
    /// reference counted, nothing copied, and no app id hashed while no app has limits of its own
    /// (every publish reads its figures so).
    public func withLimits<Value>(for app: AppID, _ body: (borrowing Limits) -> Value) -> Value {
        withNewest { edition in
            if !edition.apps.isEmpty, let own = edition.apps[app] { return body(own) }
            return body(edition.server)
        }
    }

    /// The number of editions put in force after the first, read without the lock: unchanged
    /// since a reader last saw it, what that reader read then is still in force.
    public var replacementCount: UInt64 { replacements.load(ordering: .acquiring) }

    /// Whether `app` is served.
    public func serves(_ app: AppID) -> Bool { withNewest { $0.serves(app) } }

    /// Puts `edition` in force for every request that starts from now on (an edition equal to
    /// the one in force changes nothing, and is not kept).
    public func replace(with edition: Edition) {
        editions.withLock { editions in
            guard editions[editions.count - 1].edition != edition else { return }
            install(Shared(edition), in: &editions)
        }
    }

    /// Puts `limits` in force as the server's, keeping the apps' own and the apps served.
    public func replaceServerLimits(with limits: Limits) {
        editions.withLock { editions in
            // The newest is the last: writers change both under the lock.
            var edition = editions[editions.count - 1].edition
            guard edition.server != limits else { return }
            edition.server = limits
            install(Shared(edition), in: &editions)
        }
    }

    /// Keeps `next` and makes it the newest; under the lock.
    private func install(_ next: Shared, in editions: inout [Shared]) {
        editions.append(next)
        newest.store(UInt(bitPattern: Unmanaged.passUnretained(next).toOpaque()), ordering: .releasing)
        // After the swap: a reader that sees the new number reads the new edition.
        _ = replacements.wrappingAdd(1, ordering: .releasing)
    }

    /// Runs `body` on the newest edition where it lies.
    private func withNewest<Value>(_ body: (borrowing Edition) -> Value) -> Value {
        // Never zero: `init` stores the first edition's address.
        let address = UnsafeRawPointer(bitPattern: newest.load(ordering: .acquiring))!
        return Unmanaged<Shared>.fromOpaque(address)._withUnsafeGuaranteedRef { body($0.edition) }
    }
}
