import SwitchboardCore

/// A parsed `006` token (Agora AccessToken).
///
/// Layout: `"006"` + 32-character appId + base64(content), where
/// content = packString(signature) + uint32 crc32(channelName) + uint32 crc32(uid) + packString(m),
/// m = uint32 salt + uint32 ts + map<uint16 privilege, uint32 expireTs>, and
/// signature = HMAC-SHA256(key: appCertificate, message: appId + channelName + uid + m).
/// Integers are little-endian; packString is a uint16 length then the bytes.
struct AccessToken006 {
    static let version = "006"
    static let appIdLength = 32
    /// The privilege that grants RTM login; its value is an absolute expiry time (0 = never).
    static let loginPrivilege: UInt16 = 1000

    var appId: String
    var signature: [UInt8]
    var channelNameCRC: UInt32
    var uidCRC: UInt32
    var salt: UInt32
    var ts: UInt32
    var privileges: [UInt16: UInt32]
    /// The exact bytes of `m` as they appear in the token, which the signature covers.
    var message: [UInt8]

    /// Parses `token`, throwing `.invalidToken` on anything that is not a well-formed 006 token.
    init(parsing token: String) throws(RtmError) {
        try TokenEncoding.checkLength(token)
        guard token.hasPrefix(Self.version), token.utf8.count > Self.version.count + Self.appIdLength else {
            throw TokenReader.malformed("not a 006 token")
        }
        let afterVersion = token.dropFirst(Self.version.count)
        appId = String(afterVersion.prefix(Self.appIdLength))
        guard appId.utf8.count == Self.appIdLength else { throw TokenReader.malformed("bad appId") }
        let content = try TokenEncoding.base64Decode(afterVersion.dropFirst(Self.appIdLength))

        var reader = TokenReader(content)
        signature = try reader.packedBytes()
        channelNameCRC = try reader.uint32()
        uidCRC = try reader.uint32()
        message = try reader.packedBytes()
        try reader.expectEnd()

        var messageReader = TokenReader(message)
        salt = try messageReader.uint32()
        ts = try messageReader.uint32()
        privileges = try messageReader.privilegeMap()
        try messageReader.expectEnd()
    }

    /// The signature this token must carry for `appCertificate`, `channelName` and `uid`.
    func expectedSignature(appCertificate: String, channelName: String, uid: String) -> [UInt8] {
        Self.sign(appId: appId, appCertificate: appCertificate, channelName: channelName, uid: uid, message: message)
    }

    static func sign(appId: String, appCertificate: String, channelName: String, uid: String, message: [UInt8]) -> [UInt8] {
        CryptoPrimitives.hmacSHA256(
            key: Array(appCertificate.utf8),
            message: Array(appId.utf8) + Array(channelName.utf8) + Array(uid.utf8) + message)
    }

    /// Builds a signed 006 token.
    static func build(
        appId: String, appCertificate: String, channelName: String, uid: String,
        salt: UInt32, ts: UInt32, privileges: [UInt16: UInt32]
    ) throws(RtmError) -> String {
        guard appId.utf8.count == appIdLength else {
            throw RtmError(.invalidAppId, operation: OperationName.Crypto.mintToken, reason: "a 006 appId must be \(appIdLength) characters")
        }
        var m = TokenWriter()
        m.uint32(salt)
        m.uint32(ts)
        m.privilegeMap(privileges)
        let signature = sign(
            appId: appId, appCertificate: appCertificate, channelName: channelName, uid: uid, message: m.bytes)
        var content = TokenWriter()
        try content.packed(signature)
        content.uint32(TokenCompression.crc32(Array(channelName.utf8)))
        content.uint32(TokenCompression.crc32(Array(uid.utf8)))
        try content.packed(m.bytes)
        return version + appId + TokenEncoding.base64Encode(content.bytes)
    }
}
