import SwitchboardCore

/// libFuzzer target: the 006 and 007 token parsers and the verifier.
///
/// Byte 0 picks how the rest becomes a token: as the token text itself, as the binary body of a
/// 007 token (deflated and base64-encoded, so the parser's inner layers are reached), or as the
/// content of a 006 token (base64-encoded behind a 32-character app id).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTokens(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let body = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let token: String
    switch data[0] % 3 {
    case 0: token = String(decoding: body, as: UTF8.self)
    case 1: token = "007" + TokenEncoding.base64Encode(TokenCompression.deflate(body))
    default: token = "006" + appId + TokenEncoding.base64Encode(body)
    }
    _ = try? AccessToken006(parsing: token)
    _ = try? AccessToken007(parsing: token)
    _ = try? verifier.verify(token: token, appId: appId, userId: "alice", now: 1_700_000_000)
    return 0
}

private let appId = "970CA35de60c44645bbae8a215061b33"
private let verifier = TokenVerifier(credentials: [appId: "5CFd2fd1755d40ecb72977518be15d3b"])
