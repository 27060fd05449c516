import SwitchboardCore
import SwitchboardTestKit
import SwitchboardWire


/// Lowercase hex without separators.
func hex(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

/// Bytes from hex, ignoring spaces and newlines.
func bytes(hex text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// Encodes a value tree.
func pack(_ value: MessagePackValue) -> [UInt8] { MessagePackWriter.encode(value) }

/// A map value with string keys, in the given order.
func map(_ pairs: KeyValuePairs<String, MessagePackValue>) -> MessagePackValue {
    .map(pairs.map { MessagePackPair(.string($0.key), $0.value) })
}

/// The error thrown by `body`, or nil if it did not throw.
func wireError<T>(_ body: () throws(WireError) -> T) -> WireError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

extension ServerFrame {
    var pushed: Push? { if case .push(let push) = self { push } else { nil } }
}
