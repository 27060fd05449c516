import SwitchboardCore

/// A parsed `007` token (Agora AccessToken2).
///
/// Layout: `"007"` + base64(zlib(packString(signature) + signingInfo)), where
/// signingInfo = packString(appId) + uint32 issueTs + uint32 expire + uint32 salt + uint16 count +
/// services, and each service is uint16 type + map<uint16, uint32> privileges + its own fields.
/// Expiry values are seconds after `issueTs`. The signature is HMAC-SHA256 of signingInfo under
/// HMAC-SHA256(key: salt, message: HMAC-SHA256(key: issueTs, message: appCertificate)), with
/// salt and issueTs as 4 little-endian bytes.
struct AccessToken007 {
    static let version = "007"

    var signature: [UInt8]
    var appId: String
    var issueTs: UInt32
    var expire: UInt32
    var salt: UInt32
    var services: [UInt16: TokenService]
    /// The exact signed bytes as they appear in the token.
    var signingInfo: [UInt8]

    /// Parses `token`, throwing `.invalidToken` on anything that is not a well-formed 007 token.
    init(parsing token: String) throws(RtmError) {
        try TokenEncoding.checkLength(token)
        guard token.hasPrefix(Self.version) else { throw TokenReader.malformed("not a 007 token") }
        let compressed = try TokenEncoding.base64Decode(token.dropFirst(Self.version.count))
        let body = try TokenCompression.inflate(compressed)

        var reader = TokenReader(body)
        signature = try reader.packedBytes()
        let start = reader.position
        appId = try reader.packedString()
        issueTs = try reader.uint32()
        expire = try reader.uint32()
        salt = try reader.uint32()
        let count = Int(try reader.uint16())
        services = [:]
        for _ in 0..<count {
            let service = try TokenService(reading: &reader)
            guard services.updateValue(service, forKey: service.type) == nil else {
                throw TokenReader.malformed("duplicate service \(service.type)")
            }
        }
        try reader.expectEnd()
        signingInfo = Array(reader.consumed(from: start))
    }

    /// The signature this token must carry for `appCertificate`.
    func expectedSignature(appCertificate: String) -> [UInt8] {
        Self.sign(appCertificate: appCertificate, issueTs: issueTs, salt: salt, signingInfo: signingInfo)
    }

    static func signingKey(appCertificate: String, issueTs: UInt32, salt: UInt32) -> [UInt8] {
        var issue = TokenWriter()
        issue.uint32(issueTs)
        var saltBytes = TokenWriter()
        saltBytes.uint32(salt)
        let inner = CryptoPrimitives.hmacSHA256(key: issue.bytes, message: Array(appCertificate.utf8))
        return CryptoPrimitives.hmacSHA256(key: saltBytes.bytes, message: inner)
    }

    static func sign(appCertificate: String, issueTs: UInt32, salt: UInt32, signingInfo: [UInt8]) -> [UInt8] {
        CryptoPrimitives.hmacSHA256(
            key: signingKey(appCertificate: appCertificate, issueTs: issueTs, salt: salt), message: signingInfo)
    }

    /// Builds a signed 007 token carrying `services`.
    static func build(
        appId: String, appCertificate: String, issueTs: UInt32, expire: UInt32, salt: UInt32,
        services: [TokenService]
    ) throws(RtmError) -> String {
        var info = TokenWriter()
        try info.packed(Array(appId.utf8))
        info.uint32(issueTs)
        info.uint32(expire)
        info.uint32(salt)
        info.uint16(UInt16(services.count))
        for service in services.sorted(by: { $0.type < $1.type }) { try service.write(to: &info) }
        let signature = sign(appCertificate: appCertificate, issueTs: issueTs, salt: salt, signingInfo: info.bytes)
        var body = TokenWriter()
        try body.packed(signature)
        body.append(raw: info.bytes)
        return version + TokenEncoding.base64Encode(TokenCompression.deflate(body.bytes))
    }
}
