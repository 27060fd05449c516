/// A set for the many small sets a server keeps per session, user or channel (the channels of a
/// session, the sessions of a user, the members of a channel): it holds one element inline, with
/// no allocation, and more in a hash table, going back inline when one is left.
///
/// Most such sets hold one element (a user has one session, most channels of a small app have one
/// member), and a one-element `Set` is a heap object of about 150 bytes. Operations are a `Set`'s,
/// O(1); iteration order is unspecified, as a `Set`'s. (A `CompactDictionary` with no values.)
public struct CompactSet<Element: Hashable & Sendable>: Sendable, Sequence, ExpressibleByArrayLiteral {
    // Internal and inlinable, as `CompactDictionary`'s storage, for code specialized in the user.
    @usableFromInline
    var table = CompactDictionary<Element, Present>()

    /// The value of every key of `table`: an element is there or not.
    @usableFromInline
    struct Present: Sendable {
        @inlinable init() {}
    }

    /// An empty set.
    @inlinable
    public init() {}

    /// A set of `elements`.
    @inlinable
    public init<S: Sequence>(_ elements: S) where S.Element == Element {
        for element in elements { insert(element) }
    }

    @inlinable
    public init(arrayLiteral elements: Element...) { self.init(elements) }

    /// Whether the set has no element.
    @inlinable
    public var isEmpty: Bool { table.isEmpty }

    /// How many elements the set has.
    @inlinable
    public var count: Int { table.count }

    /// The element of a set that has exactly one; nil when it has none or several.
    @inlinable
    public var onlyElement: Element? {
        if case .one(let element, _) = table.storage { element } else { nil }
    }

    /// Whether `element` is in the set.
    @inlinable
    public func contains(_ element: Element) -> Bool { table[element] != nil }

    /// Adds `element`; false when it was there already.
    @inlinable
    @discardableResult
    public mutating func insert(_ element: Element) -> Bool {
        guard table[element] == nil else { return false }
        table[element] = Present()
        return true
    }

    /// Removes `element`; returns it, or nil when it was not there.
    @inlinable
    @discardableResult
    public mutating func remove(_ element: Element) -> Element? {
        table.removeValue(forKey: element).map { _ in element }
    }

    @inlinable
    public func makeIterator() -> Iterator { Iterator(entries: table.makeIterator()) }

    @inlinable
    public var underestimatedCount: Int { count }

    /// Iterates over a `CompactSet`.
    public struct Iterator: IteratorProtocol {
        @usableFromInline
        var entries: CompactDictionary<Element, Present>.Iterator

        @inlinable
        init(entries: CompactDictionary<Element, Present>.Iterator) { self.entries = entries }

        @inlinable
        public mutating func next() -> Element? { entries.next()?.key }
    }
}

extension CompactSet: Equatable {
    @inlinable
    public static func == (lhs: CompactSet, rhs: CompactSet) -> Bool {
        lhs.count == rhs.count && lhs.allSatisfy(rhs.contains)
    }
}

extension Dictionary {
    /// Removes `element` from the set at `key`, and the set once it is empty.
    @inlinable
    public mutating func remove<Element>(_ element: Element, fromSetAt key: Key) where Value == CompactSet<Element> {
        guard var set = removeValue(forKey: key) else { return }
        set.remove(element)
        if !set.isEmpty { self[key] = set }
    }
}
