import SwitchboardCore

/// The `"t"` of each of a feature's reference operations on the wire: the reference's name
/// (`OperationName`), unless the feature renames it. The one place a wire name and the reference
/// operation it carries out meet.
///
/// A frame's type is matched by comparing names in order, without hashing: every frame is read
/// this way, so a feature lists its busiest operation first. That one is kept apart from the
/// list, so the common frame is matched without touching the list's storage (reaching an array
/// shared by every event loop is a reference count changed on each, a cache line bounced between
/// cores on every frame).
struct WireOperationNames<Operation: OperationNameTable>: Sendable {
    private let first: (name: String, operation: Operation)
    private let rest: [(name: String, operation: Operation)]

    /// The wire names of `operations` (at least one, the busiest first): each its reference
    /// name, or what `renamed` gives it.
    init(_ operations: [Operation], renamed: [Operation: String] = [:]) {
        let entries = operations.map { (name: renamed[$0] ?? $0.rawValue, operation: $0) }
        first = entries[0]
        rest = Array(entries.dropFirst())
    }

    /// The operation a frame of type `name` carries out; nil when it is none of these.
    func operation(named name: String) -> Operation? {
        if first.name == name { return first.operation }
        for entry in rest where entry.name == name { return entry.operation }
        return nil
    }

    /// The `"t"` of `operation`.
    func name(of operation: Operation) -> String {
        if first.operation == operation { return first.name }
        for entry in rest where entry.operation == operation { return entry.name }
        return operation.rawValue
    }
}
