/// A set for the many small sets a server keeps per session, user or channel (the channels of a
/// session, the sessions of a user, the members of a channel): it holds one element inline, with
/// no allocation, and more in a `Set`, going back inline when one is left.
///
/// Most such sets hold one element (a user has one session, most channels of a small app have one
/// member), and a one-element `Set` is a heap object of about 150 bytes. Operations are a `Set`'s,
/// O(1); iteration order is unspecified, as a `Set`'s.
public struct CompactSet<Element: Hashable & Sendable>: Sendable, Sequence, ExpressibleByArrayLiteral {
    private enum Storage: Sendable {
        case empty
        case one(Element)
        case many(Set<Element>)
    }

    private var storage: Storage

    /// An empty set.
    public init() { storage = .empty }

    /// A set of `elements`.
    public init<S: Sequence>(_ elements: S) where S.Element == Element {
        storage = .empty
        for element in elements { insert(element) }
    }

    public init(arrayLiteral elements: Element...) { self.init(elements) }

    /// Whether the set has no element.
    public var isEmpty: Bool {
        if case .empty = storage { true } else { false }
    }

    /// How many elements the set has.
    public var count: Int {
        switch storage {
        case .empty: 0
        case .one: 1
        case .many(let set): set.count
        }
    }

    /// Whether `element` is in the set.
    public func contains(_ element: Element) -> Bool {
        switch storage {
        case .empty: false
        case .one(let only): only == element
        case .many(let set): set.contains(element)
        }
    }

    /// Adds `element`; false when it was there already.
    @discardableResult
    public mutating func insert(_ element: Element) -> Bool {
        switch storage {
        case .empty:
            storage = .one(element)
            return true
        case .one(let only):
            guard only != element else { return false }
            storage = .many([only, element])
            return true
        case .many(var set):
            // Let go of the set first, so it is changed in place rather than copied.
            storage = .empty
            let inserted = set.insert(element).inserted
            storage = .many(set)
            return inserted
        }
    }

    /// Removes `element`; returns it, or nil when it was not there.
    @discardableResult
    public mutating func remove(_ element: Element) -> Element? {
        switch storage {
        case .empty:
            return nil
        case .one(let only):
            guard only == element else { return nil }
            storage = .empty
            return only
        case .many(var set):
            storage = .empty
            let removed = set.remove(element)
            storage = set.count == 1 ? .one(set.first!) : .many(set)
            return removed
        }
    }

    public func makeIterator() -> Iterator {
        switch storage {
        case .empty: Iterator(state: .done)
        case .one(let only): Iterator(state: .one(only))
        case .many(let set): Iterator(state: .many(set.makeIterator()))
        }
    }

    public var underestimatedCount: Int { count }

    /// Iterates over a `CompactSet`.
    public struct Iterator: IteratorProtocol {
        fileprivate enum State {
            case done
            case one(Element)
            case many(Set<Element>.Iterator)
        }

        fileprivate var state: State

        public mutating func next() -> Element? {
            switch state {
            case .done:
                return nil
            case .one(let only):
                state = .done
                return only
            case .many(var iterator):
                let next = iterator.next()
                state = .many(iterator)
                return next
            }
        }
    }
}

extension CompactSet: Equatable {
    public static func == (lhs: CompactSet, rhs: CompactSet) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.empty, .empty): true
        case (.one(let a), .one(let b)): a == b
        case (.many(let a), .many(let b)): a == b
        default: false
        }
    }
}

extension Dictionary {
    /// Removes `element` from the set at `key`, and the set once it is empty.
    public mutating func remove<Element>(_ element: Element, fromSetAt key: Key) where Value == CompactSet<Element> {
        guard var set = removeValue(forKey: key) else { return }
        set.remove(element)
        if !set.isEmpty { self[key] = set }
    }
}
