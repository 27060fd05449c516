extension Dictionary {
    /// Removes `element` from the set at `key`, and the set once it is empty.
    mutating func remove<Element: Hashable>(_ element: Element, fromSetAt key: Key) where Value == Set<Element> {
        self[key]?.remove(element)
        if self[key]?.isEmpty == true { self[key] = nil }
    }
}
