import SwitchboardCore
import SwitchboardStorage

/// Reads what `MetadataScripts` write: a set as stored, and a change as published (its revision's
/// field, then the set). Fields are netstrings, `length:bytes`.
enum StoredSetCodec {
    /// Bytes that are not what the scripts write.
    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    /// The set in `blob`; nil for an empty blob (the set is gone).
    static func set(_ blob: [UInt8]) throws(Malformed) -> StoredSet? {
        guard !blob.isEmpty else { return nil }
        var fields = Fields(blob)
        let format = try fields.bytes()
        guard format == Array("1".utf8) else { throw Malformed(description: "set format \(String(decoding: format, as: UTF8.self))") }
        let major = try fields.integer(Int64.self)
        var items: [StoredItem] = []
        while !fields.isAtEnd {
            let key = try fields.text()
            let value = try fields.bytes()
            let size = try fields.integer(Int.self)
            let revision = try fields.integer(Int64.self)
            let updateTs = try fields.integer(UInt64.self)
            let author = try fields.text()
            let position = try fields.integer(Int64.self)
            let expiresAt = try fields.optionalInteger(UInt64.self)
            let session = try fields.bytes()
            items.append(
                StoredItem(
                    key: key, value: value, size: size, revision: revision, updateTs: updateTs, author: author,
                    position: position, expiresAt: expiresAt, session: try Self.session(session)))
        }
        return StoredSet(majorRevision: major, items: items)
    }

    /// The change of `target` in a published `payload`.
    static func change(_ payload: [UInt8], of target: MetadataTarget) throws(Malformed) -> MetadataCommit {
        var fields = Fields(payload)
        let revision = try fields.integer(Int64.self)
        return MetadataCommit(target: target, set: try set(Array(fields.rest)), revision: revision)
    }

    /// An item's session field, `node:session`, as the session's number (which means something
    /// only on its node); nil when empty.
    private static func session(_ field: [UInt8]) throws(Malformed) -> SessionID? {
        guard !field.isEmpty else { return nil }
        guard let colon = field.lastIndex(of: UInt8(ascii: ":")),
            let number = UInt64(String(decoding: field[(colon + 1)...], as: UTF8.self))
        else { throw Malformed(description: "session field \(String(decoding: field, as: UTF8.self))") }
        return SessionID(number)
    }

    /// Netstring fields, read one after another.
    private struct Fields {
        let data: [UInt8]
        var position = 0

        init(_ data: [UInt8]) { self.data = data }

        var isAtEnd: Bool { position >= data.count }
        var rest: ArraySlice<UInt8> { data[position...] }

        mutating func next() -> ArraySlice<UInt8>? {
            guard !isAtEnd, let colon = data[position...].firstIndex(of: UInt8(ascii: ":")),
                let length = Int(String(decoding: data[position..<colon], as: UTF8.self)), length >= 0,
                length <= data.count - colon - 1
            else { return nil }
            position = colon + 1 + length
            return data[(colon + 1)..<position]
        }

        mutating func bytes() throws(Malformed) -> [UInt8] {
            guard let field = next() else { throw Malformed(description: "a field is missing at byte \(position)") }
            return Array(field)
        }

        mutating func text() throws(Malformed) -> String {
            guard let text = String(validating: try bytes(), as: UTF8.self) else {
                throw Malformed(description: "a text field is not UTF-8 at byte \(position)")
            }
            return text
        }

        mutating func integer<T: FixedWidthInteger>(_: T.Type) throws(Malformed) -> T {
            guard let value = try optionalInteger(T.self) else { throw Malformed(description: "an empty number at byte \(position)") }
            return value
        }

        mutating func optionalInteger<T: FixedWidthInteger>(_: T.Type) throws(Malformed) -> T? {
            let field = try bytes()
            guard !field.isEmpty else { return nil }
            guard let value = T(String(decoding: field, as: UTF8.self)) else {
                throw Malformed(description: "not a number: \(String(decoding: field, as: UTF8.self))")
            }
            return value
        }
    }
}
