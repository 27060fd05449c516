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

    /// An edition, shared by reference so a reader copies nothing, with its server limits also in
    /// memory of their own, at an address that stays valid as long as the edition does (the book
    /// keeps every edition for its life): a reader is lent them from there (`withLimits`).
    private final class Shared: @unchecked Sendable {
        // Sendable proof: `edition` and what `server` points to are written once, in `init`,
        // before the object can be shared, only read after, and `server` is freed in `deinit`,
        // when no reader holds the object.
        let edition: Edition
        let server: UnsafeMutablePointer<Limits>

        init(_ edition: Edition) {
            self.edition = edition
            server = .allocate(capacity: 1)
            server.initialize(to: edition.server)
        }

        deinit {
            server.deinitialize(count: 1)
            server.deallocate()
        }
    }

    /// Every distinct edition put in force, oldest first, kept for the book's life: a replacement
    /// by an edition never seen adds one (a kilobyte, and half a kilobyte for each app with limits
    /// of its own), one equal to an earlier edition puts that one back in force, so the list holds
    /// each edition an operator wrote once however often reloads go back and forth. Only writers
    /// take the lock.
    private let editions: PortableMutex<[Shared]>
    /// The address of the edition in force, one of `editions`, which readers go through without
    /// the lock and without retaining it: every address it ever holds is of an edition `editions`
    /// keeps as long as the book lives, and a reader holds the book. Stored (releasing) once the
    /// edition is in `editions`, loaded acquiring, so a reader sees the edition whole.
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
    public func limits(for app: AppID) -> Limits { withNewest { $0.limits(for: app) } }

    /// What `read` finds in the limits of `app`, without copying them (`withLimits`).
    @inlinable
    public func reading<Value>(for app: AppID, _ read: (Limits) -> Value) -> Value {
        withLimits(for: app, read)
    }

    /// Runs `body` on the limits of `app`, in the edition in force: no lock, no reference counted,
    /// and while no app has limits of its own nothing copied and no app id hashed (every publish
    /// reads its figures so); an app's own limits are copied out of the dictionary once.
    /// Inlined where it is called, so the compiler sees `body` and lends it the server's limits
    /// where they lie (called through an unspecialised generic, it copied the half kilobyte first).
    @inlinable
    public func withLimits<Value>(for app: AppID, _ body: (borrowing Limits) -> Value) -> Value {
        if let server = serverLimits(unlessOwnedBy: app) { return body(server.pointee) }
        return body(limits(for: app))
    }

    /// The address of the server's limits in the edition in force, valid as long as the book
    /// lives; nil when `app` has limits of its own.
    @usableFromInline
    func serverLimits(unlessOwnedBy app: AppID) -> UnsafePointer<Limits>? {
        // Never zero: `init` stores the first edition's address.
        let address = UnsafeRawPointer(bitPattern: newest.load(ordering: .acquiring))!
        return Unmanaged<Shared>.fromOpaque(address)._withUnsafeGuaranteedRef { shared in
            if !shared.edition.apps.isEmpty, shared.edition.apps[app] != nil { return nil }
            return UnsafePointer(shared.server)
        }
    }

    /// How many times another edition was put in force since the book was made, read without the
    /// lock: unchanged since a reader last saw it, what that reader read then is still in force.
    public var replacementCount: UInt64 { replacements.load(ordering: .acquiring) }

    /// Whether `app` is served.
    public func serves(_ app: AppID) -> Bool { withNewest { $0.serves(app) } }

    /// Puts `edition` in force for every request that starts from now on (an edition equal to
    /// the one in force changes nothing).
    public func replace(with edition: Edition) {
        editions.withLock { editions in install(edition, in: &editions) }
    }

    /// Puts `limits` in force as the server's, keeping the apps' own and the apps served.
    public func replaceServerLimits(with limits: Limits) {
        editions.withLock { editions in
            // Under the lock: the edition in force cannot change meanwhile.
            var edition = withNewest { copy $0 }
            edition.server = limits
            install(edition, in: &editions)
        }
    }

    /// Puts `edition` in force unless it is already: the kept edition equal to it if there is
    /// one, else a new one kept from now on. Under the lock.
    private func install(_ edition: Edition, in editions: inout [Shared]) {
        func address(_ shared: Shared) -> UInt { UInt(bitPattern: Unmanaged.passUnretained(shared).toOpaque()) }
        let next: Shared
        if let kept = editions.first(where: { $0.edition == edition }) {
            guard address(kept) != newest.load(ordering: .relaxed) else { return }
            next = kept
        } else {
            next = Shared(edition)
            editions.append(next)
        }
        newest.store(address(next), ordering: .releasing)
        // After the swap: a reader that sees the new number reads the new edition.
        _ = replacements.wrappingAdd(1, ordering: .releasing)
    }

    /// Runs `body` on the edition in force, where it lies.
    private func withNewest<Value>(_ body: (borrowing Edition) -> Value) -> Value {
        // Never zero: `init` stores the first edition's address.
        let address = UnsafeRawPointer(bitPattern: newest.load(ordering: .acquiring))!
        return Unmanaged<Shared>.fromOpaque(address)._withUnsafeGuaranteedRef { body($0.edition) }
    }
}
