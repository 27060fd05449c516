import SwitchboardCore

/// A set that is also an array: insert and remove in O(1) (a removal moves the last element into
/// the gap), and the elements as an array with no copying, for a fan-out.
struct IndexedSet<Element: Hashable & Sendable>: Sendable {
    /// The elements, in no particular order.
    private(set) var elements: [Element] = []
    private var positions: CompactDictionary<Element, Int> = [:]

    /// Whether the set has no elements.
    var isEmpty: Bool { elements.isEmpty }

    /// Adds `element` unless present.
    mutating func insert(_ element: Element) {
        guard positions[element] == nil else { return }
        positions[element] = elements.count
        elements.append(element)
    }

    /// Removes `element` if present.
    mutating func remove(_ element: Element) {
        guard let position = positions.removeValue(forKey: element) else { return }
        let last = elements.removeLast()
        guard position < elements.count else { return }
        elements[position] = last
        positions[last] = position
    }
}
