import SwitchboardTestKit
import SwitchboardCore
import Testing

@testable import SwitchboardCrypto


private let appId = ReferenceTokens.appId
private let verifier = ReferenceTokens.verifier

/// Changes, inserts, deletes or truncates a few bytes.
private func mutate(_ bytes: [UInt8], alphabet: [UInt8]?, using rng: inout SeededGenerator) -> [UInt8] {
    var bytes = bytes
    for _ in 0..<Int.random(in: 1...4, using: &rng) {
        let pick = { (rng: inout SeededGenerator) -> UInt8 in
            alphabet?.randomElement(using: &rng) ?? UInt8.random(in: 0...255, using: &rng)
        }
        switch Int.random(in: 0..<5, using: &rng) {
        case 0 where !bytes.isEmpty:
            bytes[Int.random(in: bytes.indices, using: &rng)] = pick(&rng)
        case 1:
            bytes.insert(pick(&rng), at: Int.random(in: 0...bytes.count, using: &rng))
        case 2 where !bytes.isEmpty:
            bytes.remove(at: Int.random(in: bytes.indices, using: &rng))
        case 3:
            bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &rng)))
        default:
            // Overwrite a byte with a length-like extreme.
            if !bytes.isEmpty { bytes[Int.random(in: bytes.indices, using: &rng)] = [0x00, 0xFF, 0x7F, 0x80].randomElement(using: &rng)! }
        }
    }
    return bytes
}

@Test(.timeLimit(.minutes(1))) func mutatedTokensNeverCrashOrForge() async throws {
    var rng = SeededGenerator(seed: 0x5EED_0007_0006)
    let originals: [(token: String, user: String)] = [
        (ReferenceTokens.alice006, "alice"), (ReferenceTokens.alice007, "alice"), (ReferenceTokens.bob007WithRTC, "bob"),
    ]
    let grants = try originals.map { try verifier.verifyLogin(token: $0.token, appId: appId, userId: $0.user, now: 0) }
    let base64Alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ 0".utf8)
    var unexpected: [String] = []
    for iteration in 0..<20_000 {
        await SharedExecutor.yield(atStep: iteration, every: 1_000)
        let index = Int.random(in: originals.indices, using: &rng)
        let (token, user) = originals[index]
        let mutated: String
        switch iteration % 3 {
        case 0:
            // Text level: the token string itself.
            mutated = String(decoding: mutate(Array(token.utf8), alphabet: base64Alphabet, using: &rng), as: UTF8.self)
        case 1 where token.hasPrefix("007"):
            // Below zlib: mutate the inflated body, so the field parser sees the damage.
            let body = try TokenCompression.inflate(TokenEncoding.base64Decode(token.dropFirst(3)[...]))
            mutated = "007" + TokenEncoding.base64Encode(TokenCompression.deflate(mutate(body, alphabet: nil, using: &rng)))
        case 1:
            let prefix = token.prefix(35)
            let content = try TokenEncoding.base64Decode(token.dropFirst(35)[...])
            mutated = prefix + TokenEncoding.base64Encode(mutate(content, alphabet: nil, using: &rng))
        default:
            // Compressed level: mutate the zlib stream itself.
            guard token.hasPrefix("007") else { continue }
            let compressed = try TokenEncoding.base64Decode(token.dropFirst(3)[...])
            mutated = "007" + TokenEncoding.base64Encode(mutate(compressed, alphabet: nil, using: &rng))
        }
        do {
            let grant = try verifier.verifyLogin(token: mutated, appId: appId, userId: user, now: 0)
            if grant != grants[index] { unexpected.append("accepted with a different grant: \(mutated)") }
        } catch {
            if ![.invalidToken, .tokenExpired, .invalidAppId, .loginInconsistentAppId].contains(error.code) {
                unexpected.append("\(error.code) for \(mutated)")
            }
        }
    }
    #expect(unexpected.isEmpty, "\(unexpected.prefix(5))")
}

@Test(.timeLimit(.minutes(1))) func zipBombIsRejectedWithoutInflatingIt() {
    let bomb = TokenCompression.deflate([UInt8](repeating: 0, count: 4 * 1024 * 1024))
    let token = "007" + TokenEncoding.base64Encode(bomb)
    #expect(token.utf8.count < TokenEncoding.maxTokenByteCount)
    expectMalformed("body inflates too large or is truncated") { () throws(RtmError) in _ = try AccessToken007(parsing: token) }
}

@Test(.timeLimit(.minutes(1))) func declaredLengthsBeyondTheDataAreRejected() {
    var body = TokenWriter()
    body.uint16(0xFFFF)  // a signature "65535 bytes long"
    body.append(raw: [1, 2, 3])
    #expect(throws: RtmError.self) {
        try AccessToken007(parsing: "007" + TokenEncoding.base64Encode(TokenCompression.deflate(body.bytes)))
    }
    var content = TokenWriter()
    content.uint16(32)
    content.append(raw: [UInt8](repeating: 0, count: 32))
    content.uint32(0)
    content.uint32(0)
    content.uint16(6)
    content.append(raw: [0, 0, 0, 0, 0, 0])
    // m: salt, ts, then a privilege map claiming 65535 entries.
    #expect(throws: RtmError.self) {
        try AccessToken006(parsing: "006" + appId + TokenEncoding.base64Encode(content.bytes + [0xFF, 0xFF]))
    }
}

@Test(.timeLimit(.minutes(1))) func oversizedTokensAreRejectedBeforeDecoding() {
    let huge = "007" + String(repeating: "A", count: 1_000_000)
    expectMalformed("longer than 8192 bytes") { () throws(RtmError) in
        _ = try verifier.verifyLogin(token: huge, appId: appId, userId: "alice", now: 0)
    }
    let huge006 = "006" + appId + String(repeating: "A", count: 1_000_000)
    expectMalformed("longer than 8192 bytes") { () throws(RtmError) in
        _ = try verifier.verifyLogin(token: huge006, appId: appId, userId: "alice", now: 0)
    }
}

/// Expects `body` to refuse a token as malformed (`.invalidToken`) for the reason containing `detail`.
private func expectMalformed(
    _ detail: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws(RtmError) -> Void
) {
    do {
        try body()
        Issue.record("accepted", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == .invalidToken, sourceLocation: sourceLocation)
        #expect(error.reason.contains(detail), "\(error.reason)", sourceLocation: sourceLocation)
    }
}

@Test(.timeLimit(.minutes(1))) func trailingBytesAfterTheZlibStreamAreRejected() throws {
    let compressed = try TokenEncoding.base64Decode(ReferenceTokens.alice007.dropFirst(3)[...])
    #expect(throws: RtmError.self) {
        try AccessToken007(parsing: "007" + TokenEncoding.base64Encode(compressed + [0]))
    }
}
