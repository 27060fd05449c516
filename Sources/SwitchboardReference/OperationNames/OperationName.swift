/// The operation names errors report (`RtmError.operation`), one table per feature: the
/// reference's method names (`OperationName.Lock.acquireLock` is `"acquireLock"`), and
/// Switchboard's own for the steps the reference has no method for (a heartbeat, sealing).
///
/// Every part of Switchboard (modules, server, SDK) names an operation from these tables, so no
/// name is spelled twice. The wire's `"t"` values are the protocol's own (`SwitchboardWire`); where
/// one differs from the reference's name, the wire says which reference operation it carries out.
public enum OperationName {}

/// One feature's table of operation names: each case an operation, its raw value the name.
public protocol OperationNameTable: RawRepresentable<String>, CaseIterable, Hashable, Sendable {}

extension RtmError {
    /// An error of `operation` with `code` and `reason`.
    public init(_ code: RtmErrorCode, operation: some OperationNameTable, reason: String) {
        self.init(code, operation: operation.rawValue, reason: reason)
    }
}
