/// libFuzzer target: the HTTP/1.1 request parser of the admin listener.
///
/// Byte 0 picks the chunk size; the rest is fed to `HTTPRequestParser` in chunks of that size,
/// and again whole to a second parser. Both must take the same requests out and fail (or not)
/// alike; every request must respect the bounds, and the bytes it took must add up.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let chunkSize = Int(data[0]) + 1
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    var offset = 0
    var chunked = HTTPRequestParser(maxHeadBytes: 1024, maxBodyBytes: 512)
    var chunkedRequests: [HTTPRequest] = []
    var chunkedFailure: HTTPRequestFailure?
    reading: while offset < input.count {
        let end = min(input.count, offset + chunkSize)
        chunked.append(Array(input[offset..<end]))
        offset = end
        do {
            while let request = try chunked.nextRequest() { chunkedRequests.append(request) }
        } catch {
            chunkedFailure = error
            break reading
        }
    }
    var whole = HTTPRequestParser(maxHeadBytes: 1024, maxBodyBytes: 512)
    whole.append(input)
    var wholeRequests: [HTTPRequest] = []
    var wholeFailure: HTTPRequestFailure?
    do {
        while let request = try whole.nextRequest() { wholeRequests.append(request) }
    } catch {
        wholeFailure = error
    }
    // A failure found early in chunks may hide requests the whole input would have given first.
    if chunkedFailure == nil, wholeFailure == nil, chunkedRequests != wholeRequests {
        fatalError("chunks of \(chunkSize) gave \(chunkedRequests.count) requests, the whole input \(wholeRequests.count)")
    }
    if chunkedFailure == nil, wholeFailure == nil, chunked.bufferedByteCount != whole.bufferedByteCount {
        fatalError("chunked parser holds \(chunked.bufferedByteCount) bytes, whole \(whole.bufferedByteCount)")
    }
    for request in chunkedRequests + wholeRequests {
        guard request.body.count <= 512, request.target.hasPrefix("/") else { fatalError("request out of bounds") }
        _ = request.keepsAlive
        _ = request.path
    }
    return 0
}
