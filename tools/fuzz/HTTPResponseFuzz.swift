/// libFuzzer target: the response-head reader of the webhooks' HTTP client.
///
/// Byte 0 picks the chunk size; the rest is fed to `HTTPResponseHeadParser` in chunks of that
/// size, and again whole to a second parser (both bounded to 1 KiB). Both must come to the same
/// answer; a head they take must have a status of three digits and names without spaces.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPResponse(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let chunkSize = Int(data[0]) + 1
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    var chunked = HTTPResponseHeadParser(maxHeadBytes: 1024)
    var progress = HTTPResponseHeadParser.Progress.needMore
    var offset = 0
    while offset < input.count, progress == .needMore {
        let end = min(input.count, offset + chunkSize)
        progress = chunked.feed(input[offset..<end])
        offset = end
    }
    var whole = HTTPResponseHeadParser(maxHeadBytes: 1024)
    let once = whole.feed(input)
    // A head longer than the bound may be refused before its end in chunks and after it whole.
    if progress != once, !(input.count > 1024) {
        fatalError("chunks of \(chunkSize) gave \(progress), the whole input \(once)")
    }
    if case .head(let head) = progress {
        guard (100...999).contains(head.status), head.headers.allSatisfy({ !$0.name.isEmpty && !$0.name.contains(" ") }) else {
            fatalError("a head out of bounds: \(head)")
        }
    }
    return 0
}
