/// libFuzzer target: the HTTP head reader and both sides of the opening handshake.
///
/// Byte 0 picks the chunk size; the rest is fed to `HTTPHeadReader` and, once a head is complete,
/// to the server handshake (as a request) and the client handshake (as a response).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPHandshake(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let chunkSize = Int(data[0]) + 1
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    var reader = HTTPHeadReader(maxBytes: 2048)
    var offset = 0
    while offset < input.count {
        let end = min(input.count, offset + chunkSize)
        let result: (head: [UInt8], rest: [UInt8])?
        do {
            result = try reader.append(Array(input[offset..<end]))
        } catch {
            return 0
        }
        offset = end
        guard let (head, rest) = result else { continue }
        guard head.count <= 2048, head.count + rest.count == end else {
            fatalError("head \(head.count) + rest \(rest.count) != \(end) bytes read")
        }
        check(head)
        return 0
    }
    check(input)
    return 0
}

private func check(_ head: [UInt8]) {
    for handshake in [
        ServerHandshake(subprotocol: "switchboard.v1"),
        ServerHandshake(subprotocol: nil, requireSubprotocol: false),
        ServerHandshake(subprotocol: "switchboard.v1", allowedOrigins: ["https://app.example"]),
    ] {
        switch handshake.respond(to: head) {
        case .success(let accepted):
            guard accepted.response.starts(with: Array("HTTP/1.1 101 ".utf8)) else {
                fatalError("accepted without a 101")
            }
        case .failure(let rejected):
            guard (400..<600).contains(rejected.status) else { fatalError("rejected with \(rejected.status)") }
        }
    }
    let client = ClientHandshake(
        host: "127.0.0.1", path: "/", subprotocols: ["switchboard.v1"], key: "dGhlIHNhbXBsZSBub25jZQ==")
    _ = try? client.validate(response: head)
}
