/// libFuzzer target: the server API's JSON reader.
///
/// Byte 0 picks the nesting bound (1 to 32); the rest is parsed. A text that is accepted must
/// write back as JSON that reads as the same value, and that value must nest no deeper than the
/// bound.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let maxDepth = Int(data[0] % 32) + 1
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    guard let value = try? JSONParser.parse(input, maxDepth: maxDepth) else { return 0 }
    guard depth(of: value) <= maxDepth else { fatalError("a value nested \(depth(of: value)) deep passed the bound \(maxDepth)") }
    guard let again = try? JSONParser.parse(Array(value.text.utf8), maxDepth: maxDepth) else {
        fatalError("what was read does not read again: \(value.text)")
    }
    guard again == value || containsNaNLikeDouble(value) else { fatalError("read again differently: \(value.text)") }
    // Read as a document (a configuration file): the same value, and a line for every member.
    guard let document = try? JSONParser.parseDocument(input, maxDepth: maxDepth) else { fatalError("parse took it, parseDocument did not") }
    guard document.value == value || containsNaNLikeDouble(value) else { fatalError("parseDocument read another value") }
    let lines = 1 + input.lazy.filter { $0 == 0x0A }.count
    for path in memberPaths(of: value) {
        guard let line = document.line(of: path), (1...lines).contains(line) else { fatalError("no line for \(path)") }
    }
    return 0
}

/// The path of every object member reached through objects only (names from the top down).
private func memberPaths(of value: JSONValue, under path: [String] = []) -> [[String]] {
    guard case .object(let members) = value else { return [] }
    return members.flatMap { name, member in [path + [name]] + memberPaths(of: member, under: path + [name]) }
}

private func depth(of value: JSONValue) -> Int {
    switch value {
    case .array(let values): 1 + (values.map(depth).max() ?? 0)
    case .object(let members): 1 + (members.map { depth(of: $0.1) }.max() ?? 0)
    default: 0
    }
}

/// Doubles are written with Swift's shortest round-trip form, so they read back equal; kept as a
/// named escape should a platform's formatting ever differ.
private func containsNaNLikeDouble(_ value: JSONValue) -> Bool {
    switch value {
    case .double(let number): !number.isFinite
    case .array(let values): values.contains(where: containsNaNLikeDouble)
    case .object(let members): members.contains { containsNaNLikeDouble($0.1) }
    default: false
    }
}
