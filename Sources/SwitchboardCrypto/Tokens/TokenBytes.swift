import SwitchboardCore

/// Reads the little-endian, length-prefixed fields of a token, throwing on any overrun.
///
/// Every read is bounds-checked against the bytes actually present, so a declared length can
/// never make it read (or allocate) past the end of the input.
struct TokenReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether every byte has been read.
    var isAtEnd: Bool { offset == bytes.count }

    /// The bytes read so far, from `start`.
    func consumed(from start: Int) -> ArraySlice<UInt8> { bytes[start..<offset] }

    /// The current read position.
    var position: Int { offset }

    mutating func bytes(_ count: Int) throws(RtmError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.count - offset else { throw TokenReader.malformed("truncated") }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func uint16() throws(RtmError) -> UInt16 {
        let raw = try bytes(2)
        return UInt16(raw[raw.startIndex]) | UInt16(raw[raw.startIndex + 1]) << 8
    }

    mutating func uint32() throws(RtmError) -> UInt32 {
        let raw = try bytes(4)
        var value: UInt32 = 0
        for (shift, byte) in raw.enumerated() { value |= UInt32(byte) << (8 * UInt32(shift)) }
        return value
    }

    /// A `packString`: a uint16 length, then that many bytes.
    mutating func packedBytes() throws(RtmError) -> [UInt8] {
        Array(try bytes(Int(try uint16())))
    }

    /// A `packString` holding UTF-8 text.
    mutating func packedString() throws(RtmError) -> String {
        let raw = try packedBytes()
        guard let text = String(validating: raw, as: UTF8.self) else { throw TokenReader.malformed("text is not UTF-8") }
        return text
    }

    /// A `map<uint16, uint32>`: a uint16 count, then key/value pairs. Duplicate keys are malformed.
    mutating func privilegeMap() throws(RtmError) -> [UInt16: UInt32] {
        let count = Int(try uint16())
        guard count * 6 <= bytes.count - offset else { throw TokenReader.malformed("privilege map truncated") }
        var map: [UInt16: UInt32] = [:]
        for _ in 0..<count {
            let key = try uint16()
            let value = try uint32()
            guard map.updateValue(value, forKey: key) == nil else { throw TokenReader.malformed("duplicate privilege") }
        }
        return map
    }

    /// Throws unless every byte was read.
    func expectEnd() throws(RtmError) {
        guard isAtEnd else { throw TokenReader.malformed("trailing bytes") }
    }

    static func malformed(_ detail: String) -> RtmError {
        RtmError(.invalidToken, operation: OperationName.Session.login, reason: "malformed token: \(detail)")
    }
}

/// Writes the little-endian, length-prefixed fields of a token.
struct TokenWriter {
    private(set) var bytes: [UInt8] = []

    mutating func append<S: Sequence>(raw: S) where S.Element == UInt8 { bytes.append(contentsOf: raw) }

    mutating func uint16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func uint32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    /// Appends a `packString`; throws when `value` is longer than a uint16 length can say.
    mutating func packed<C: Collection>(_ value: C) throws(RtmError) where C.Element == UInt8 {
        guard value.count <= Int(UInt16.max) else {
            throw RtmError(.invalidParameter, operation: OperationName.Crypto.mintToken, reason: "field longer than 65535 bytes")
        }
        uint16(UInt16(value.count))
        bytes.append(contentsOf: value)
    }

    /// Appends a `map<uint16, uint32>` with keys in ascending order.
    mutating func privilegeMap(_ map: [UInt16: UInt32]) {
        uint16(UInt16(map.count))
        for key in map.keys.sorted() {
            uint16(key)
            uint32(map[key]!)
        }
    }
}
