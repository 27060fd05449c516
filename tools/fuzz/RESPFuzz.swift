/// libFuzzer target: the RESP reader.
///
/// Byte 0 picks a chunk size; the rest is read twice, all at once and in chunks of that size, and
/// both reads must give the same replies and the same refusal: a reply split anywhere reads the
/// same, and no input crashes the reader or makes it allocate past its bounds.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRESP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let chunk = Int(data[0] % 16) + 1
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let bounds = RESPReader.Bounds(bulkBytes: 1 << 16, elements: 1 << 12, depth: 16, lineBytes: 1 << 10)
    let whole = read(bytes, chunk: max(1, bytes.count), bounds: bounds)
    let pieces = read(bytes, chunk: chunk, bounds: bounds)
    if whole != pieces { fatalError("chunked read differs: \(whole) vs \(pieces)") }
    return 0
}

/// The replies read from `bytes` fed `chunk` bytes at a time, and whether the reader refused them.
private func read(_ bytes: [UInt8], chunk: Int, bounds: RESPReader.Bounds) -> Outcome {
    var reader = RESPReader(bounds: bounds)
    var outcome = Outcome()
    var start = 0
    while start < bytes.count {
        reader.append(bytes[start..<min(bytes.count, start + chunk)])
        start += chunk
        do {
            while let value = try reader.next() { outcome.replies.append(value) }
        } catch {
            outcome.refused = true
            return outcome
        }
    }
    return outcome
}

private struct Outcome: Equatable {
    var replies: [RESPValue] = []
    var refused = false
}
