import SwitchboardCore

/// libFuzzer target: the MessagePack reader and the frame decoders on top of it.
///
/// The input is decoded as one MessagePack value, as a client frame (what the server reads from
/// the network) and as a server frame (what the client reads); none may crash or hang. A publish
/// the one-pass reader takes (`HotPublish`) must be what the general path reads.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMessagePack(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    if let value = try? MessagePackValue.decode(input) {
        var writer = MessagePackWriter()
        writer.writeValue(value)
        guard (try? MessagePackValue.decode(writer.bytes)) != nil else {
            fatalError("a decoded value does not decode after re-encoding")
        }
    }
    _ = try? ClientFrame.decode(input)
    _ = try? ServerFrame.decode(input)
    input.withUnsafeBufferPointer { bytes in
        _ = try? ClientFrame.decode(bytes)
        if let hot = HotPublish.decode(bytes), hot != (try? ClientFrame.decode(input)) {
            fatalError("the one-pass publish reader and the general path disagree")
        }
    }
    return 0
}
