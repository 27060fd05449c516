/// The request handlers of a bus at one moment, by request type, never changed once made: any
/// thread reads it without a lock or reference counting (every publish looks its handler up here,
/// on two event loops at once). Open addressing over the types' identifiers, at most half full.
@usableFromInline
final class HandlerTable: @unchecked Sendable {
    // Sendable proof: `slots` is written only by `init`, before the table can be shared, and
    // freed only by `deinit`; `owners` is a `let` array. Nothing is written after `init`.
    private struct Slot {
        var type: ObjectIdentifier?
        var handler: Unmanaged<AnyRequestHandler>?
    }

    private let slots: UnsafeMutableBufferPointer<Slot>
    /// Keeps the handlers in `slots` alive as long as the table.
    private let owners: [AnyRequestHandler]

    /// A table of `handlers`.
    init(_ handlers: [ObjectIdentifier: AnyRequestHandler]) {
        var capacity = 8
        while capacity < 2 * handlers.count { capacity *= 2 }
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: Slot())
        owners = Array(handlers.values)
        for (type, handler) in handlers {
            var index = Self.start(of: type, in: capacity)
            while slots[index].type != nil { index = (index + 1) & (capacity - 1) }
            slots[index] = Slot(type: type, handler: .passUnretained(handler))
        }
    }

    deinit { slots.deallocate() }

    /// The handler of requests whose type is `type`, not retained (the table keeps it).
    @usableFromInline
    func handler(for type: ObjectIdentifier) -> Unmanaged<AnyRequestHandler>? {
        var index = Self.start(of: type, in: slots.count)
        while let found = slots[index].type {
            if found == type { return slots[index].handler }
            index = (index + 1) & (slots.count - 1)
        }
        return nil
    }

    /// Where the search for `type` starts: its address's bits mixed (a type's metadata address,
    /// aligned, so its low bits say little), in a table of `capacity` slots (a power of two).
    private static func start(of type: ObjectIdentifier, in capacity: Int) -> Int {
        Int(truncatingIfNeeded: (UInt(bitPattern: type) &* 0x9E37_79B9_7F4A_7C15) >> 32) & (capacity - 1)
    }
}
