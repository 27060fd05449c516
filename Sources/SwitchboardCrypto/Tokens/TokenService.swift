import SwitchboardCore

/// One service section of a 007 token: its type, privileges and type-specific fields.
struct TokenService: Hashable {
    /// The service types AccessToken2 defines and the fields each carries.
    enum Fields: Hashable {
        /// Type 1: packString(channelName), packString(uid).
        case rtc(channelName: String, uid: String)
        /// Type 2: packString(userId).
        case rtm(userId: String)
        /// Type 4: no fields.
        case fpa
        /// Type 5: packString(userId).
        case chat(userId: String)
        /// Type 7: packString(roomUuid), packString(userUuid), int16 role.
        case apaas(roomUuid: String, userUuid: String, role: UInt16)
    }

    static let rtcType: UInt16 = 1
    static let rtmType: UInt16 = 2
    static let fpaType: UInt16 = 4
    static let chatType: UInt16 = 5
    static let apaasType: UInt16 = 7
    /// The RTM privilege that allows login.
    static let rtmLoginPrivilege: UInt16 = 1

    var privileges: [UInt16: UInt32]
    var fields: Fields

    var type: UInt16 {
        switch fields {
        case .rtc: Self.rtcType
        case .rtm: Self.rtmType
        case .fpa: Self.fpaType
        case .chat: Self.chatType
        case .apaas: Self.apaasType
        }
    }

    init(privileges: [UInt16: UInt32], fields: Fields) {
        self.privileges = privileges
        self.fields = fields
    }

    /// Reads one service; an unknown type is malformed because its length cannot be known.
    init(reading reader: inout TokenReader) throws(RtmError) {
        let type = try reader.uint16()
        privileges = try reader.privilegeMap()
        switch type {
        case Self.rtcType: fields = .rtc(channelName: try reader.packedString(), uid: try reader.packedString())
        case Self.rtmType: fields = .rtm(userId: try reader.packedString())
        case Self.fpaType: fields = .fpa
        case Self.chatType: fields = .chat(userId: try reader.packedString())
        case Self.apaasType:
            fields = .apaas(roomUuid: try reader.packedString(), userUuid: try reader.packedString(), role: try reader.uint16())
        default: throw TokenReader.malformed("unknown service type \(type)")
        }
    }

    func write(to writer: inout TokenWriter) throws(RtmError) {
        writer.uint16(type)
        writer.privilegeMap(privileges)
        switch fields {
        case .rtc(let channelName, let uid):
            try writer.packed(Array(channelName.utf8))
            try writer.packed(Array(uid.utf8))
        case .rtm(let userId), .chat(let userId):
            try writer.packed(Array(userId.utf8))
        case .fpa:
            break
        case .apaas(let roomUuid, let userUuid, let role):
            try writer.packed(Array(roomUuid.utf8))
            try writer.packed(Array(userUuid.utf8))
            writer.uint16(role)
        }
    }
}
