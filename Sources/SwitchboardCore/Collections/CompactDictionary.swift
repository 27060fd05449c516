/// A dictionary for the many small tables a server keeps per channel (its members, its users):
/// it holds one entry inline, with no allocation, and more in a `Dictionary`, going back inline
/// when one is left.
///
/// Most channels of most apps have one member, and a one-entry `Dictionary` is a heap object of
/// about 150 bytes. Operations are a `Dictionary`'s, O(1), and a value is changed in place
/// through the subscripts; iteration order is unspecified, as a `Dictionary`'s.
public struct CompactDictionary<Key: Hashable & Sendable, Value: Sendable>: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    // The storage is internal and the operations inlinable so that the modules using these types
    // get code specialized for their keys and values: otherwise each call runs generic code that
    // looks up type metadata at run time (seen on the publish path).
    @usableFromInline
    enum Storage: Sendable {
        case empty
        case one(Key, Value)
        case many([Key: Value])
    }

    @usableFromInline
    var storage: Storage

    /// An empty dictionary.
    @inlinable
    public init() { storage = .empty }

    @inlinable
    public init(dictionaryLiteral elements: (Key, Value)...) {
        storage = .empty
        for (key, value) in elements { self[key] = value }
    }

    /// Whether the dictionary has no entry.
    @inlinable
    public var isEmpty: Bool {
        if case .empty = storage { true } else { false }
    }

    /// How many entries the dictionary has.
    @inlinable
    public var count: Int {
        switch storage {
        case .empty: 0
        case .one: 1
        case .many(let dictionary): dictionary.count
        }
    }

    /// The value of `key`, if any; setting nil removes the entry.
    @inlinable
    public subscript(key: Key) -> Value? {
        get {
            switch storage {
            case .empty: nil
            case .one(let only, let value): only == key ? value : nil
            case .many(let dictionary): dictionary[key]
            }
        }
        _modify {
            var (value, rest, dictionary) = take(key)
            if dictionary != nil {
                defer { storage = Self.compacted(dictionary!) }
                yield &dictionary![key]
            } else {
                defer { storage = Self.adding(key, value, to: rest) }
                yield &value
            }
        }
    }

    /// The value of `key`, or `defaultValue` (added when changed through this subscript).
    @inlinable
    public subscript(key: Key, default defaultValue: @autoclosure () -> Value) -> Value {
        get { self[key] ?? defaultValue() }
        _modify {
            var (value, rest, dictionary) = take(key)
            if dictionary != nil {
                defer { storage = .many(dictionary!) }
                yield &dictionary![key, default: defaultValue()]
            } else {
                var current = value.take() ?? defaultValue()
                defer { storage = Self.adding(key, current, to: rest) }
                yield &current
            }
        }
    }

    /// Empties the storage and hands over what it held, so that a value is changed in place
    /// rather than copied: the value of `key` and the other entry when there are at most two,
    /// or the whole dictionary.
    @inlinable
    mutating func take(_ key: Key) -> (value: Value?, rest: Storage, dictionary: [Key: Value]?) {
        let taken = storage
        storage = .empty
        switch consume taken {
        case .empty: return (nil, .empty, nil)
        case .one(let only, let value): return only == key ? (value, .empty, nil) : (nil, .one(only, value), nil)
        case .many(let dictionary): return (nil, .empty, dictionary)
        }
    }

    /// `rest` (empty or one entry) with the entry of `key` added, when `value` is not nil.
    @inlinable
    static func adding(_ key: Key, _ value: Value?, to rest: Storage) -> Storage {
        guard let value else { return rest }
        switch rest {
        case .one(let only, let other): return .many([only: other, key: value])
        default: return .one(key, value)
        }
    }

    /// Removes the entry of `key`; returns its value, or nil when there was none.
    @inlinable
    @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        self[key].take()
    }

    /// The keys, in no particular order.
    @inlinable
    public var keys: [Key] { map(\.key) }

    /// The values, in no particular order.
    @inlinable
    public var values: [Value] { map(\.value) }

    @inlinable
    public func makeIterator() -> Iterator {
        switch storage {
        case .empty: Iterator(state: .done)
        case .one(let key, let value): Iterator(state: .one(key, value))
        case .many(let dictionary): Iterator(state: .many(dictionary.makeIterator()))
        }
    }

    @inlinable
    public var underestimatedCount: Int { count }

    /// Iterates over the entries of a `CompactDictionary`.
    public struct Iterator: IteratorProtocol {
        @usableFromInline
        enum State {
            case done
            case one(Key, Value)
            case many(Dictionary<Key, Value>.Iterator)
        }

        @usableFromInline
        var state: State

        @inlinable
        init(state: State) { self.state = state }

        @inlinable
        public mutating func next() -> (key: Key, value: Value)? {
            switch state {
            case .done:
                return nil
            case .one(let key, let value):
                state = .done
                return (key, value)
            case .many(var iterator):
                let next = iterator.next()
                state = .many(iterator)
                return next
            }
        }
    }

    @inlinable
    static func compacted(_ dictionary: [Key: Value]) -> Storage {
        switch dictionary.count {
        case 0: .empty
        case 1: .one(dictionary.first!.key, dictionary.first!.value)
        default: .many(dictionary)
        }
    }
}
