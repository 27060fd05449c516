import SwitchboardReference

extension RtmEncryptionMode {
    /// The AES key length this mode needs, in bytes; `nil` for `.none`.
    public var keyByteCount: Int? {
        switch self {
        case .none: nil
        case .AES128GCM: 16
        case .AES256GCM: 32
        }
    }
}
