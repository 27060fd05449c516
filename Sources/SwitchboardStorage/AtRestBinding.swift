import SwitchboardCore

/// What binds a value sealed at rest to where it lives (its associated data), and the marker
/// that tells at startup whether the storage key is the one the values were sealed with.
enum AtRestBinding {
    /// The associated data of the value of `key` in the set of `target`.
    static func associatedData(_ target: MetadataTarget, key: String) -> [UInt8] {
        let (scope, name): (Int, String) =
            switch target {
            case .channel(let channel): (channel.type.rawValue, channel.name)
            case .user(let user): (RtmChannelType.user.rawValue, user.userId)
            }
        return Array("switchboard.metadata.v1\u{0}\(target.app)\u{0}\(scope)\u{0}\(name)\u{0}\(key)".utf8)
    }

    /// The plaintext of the marker.
    static let markerPlaintext = Array("switchboard metadata sealed at rest".utf8)
    /// The associated data of the marker.
    static let markerAssociatedData = Array("switchboard.metadata.v1.marker".utf8)
}
