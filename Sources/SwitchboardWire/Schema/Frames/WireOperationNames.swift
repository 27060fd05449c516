import SwitchboardCore

/// The `"t"` of each of a feature's reference operations on the wire: the reference's name
/// (`OperationName`), unless the feature renames it. The one place a wire name and the reference
/// operation it carries out meet.
///
/// A frame's type is matched by comparing names in order, without hashing: every frame is read
/// this way, so a feature lists its busiest operation first.
struct WireOperationNames<Operation: OperationNameTable>: Sendable {
    private let entries: [(name: String, operation: Operation)]

    /// The wire names of `operations`: each its reference name, or what `renamed` gives it.
    init(_ operations: [Operation], renamed: [Operation: String] = [:]) {
        entries = operations.map { (renamed[$0] ?? $0.rawValue, $0) }
    }

    /// The operation a frame of type `name` carries out; nil when it is none of these.
    func operation(named name: String) -> Operation? {
        for entry in entries where entry.name == name { return entry.operation }
        return nil
    }

    /// The `"t"` of `operation`.
    func name(of operation: Operation) -> String {
        for entry in entries where entry.operation == operation { return entry.name }
        return operation.rawValue
    }
}
