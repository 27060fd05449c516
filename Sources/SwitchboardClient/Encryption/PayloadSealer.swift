import Foundation
import SwitchboardCore
import SwitchboardWire

/// Seals what a client sends and opens what it receives under the key of its `RtmEncryptionConfig`.
///
/// The AES key is derived once, when the sealer is made; sealing and opening then run the
/// platform's cipher (`SealedPayload` over `PlatformCipher`) synchronously on the caller's thread,
/// with no actor hop per message. Message bodies use `seal(_:)` / `open(_:)`; string-only fields
/// (presence state values) use `sealText(_:)` / `openText(_:)`. docs/PROTOCOL.md §9 describes the
/// format.
struct PayloadSealer: Sendable {
    /// What the first plaintext byte says about the body that follows it.
    enum Kind: UInt8 {
        /// A string message: the body is its UTF-8 bytes.
        case string = 0x01
        /// A binary message: the body is its bytes.
        case binary = 0x02
    }

    /// Bytes a sealed body adds to the message: the kind byte plus version, nonce and tag.
    static let overhead = 1 + SealedPayload.overhead

    /// AES-128-GCM or AES-256-GCM.
    let mode: RtmEncryptionMode
    private let key: [UInt8]

    /// Derives the key from `settings`; throws `invalidEncryptionParameter` when they are unusable.
    init(_ settings: ClientSettings.EncryptionSettings) throws(RtmErrorInfo) {
        do {
            key = try SealedPayload.deriveKey(mode: settings.mode, encryptionKey: settings.key, salt: settings.salt)
        } catch {
            throw RtmErrorInfo(.invalidEncryptionParameter, operation: OperationName.Session.initialize, reason: error.reason)
        }
        mode = settings.mode
    }

    /// The sealed form of `payload`: always binary, whatever the kind of the original.
    func seal(_ payload: MessagePayload) throws(RtmErrorInfo) -> MessagePayload {
        switch payload {
        case .string(let text): .binary(try seal(.string, Array(text.utf8)))
        case .binary(let bytes): .binary(try seal(.binary, bytes))
        }
    }

    /// The original of a payload made by `seal(_:)`, with its kind. Throws
    /// `channelEncryptMessageFailed` for anything else: a str, another key, a changed byte.
    func open(_ payload: MessagePayload) throws(RtmErrorInfo) -> MessagePayload {
        guard case .binary(let sealed) = payload else {
            throw RtmErrorInfo(.channelEncryptMessageFailed, operation: OperationName.Crypto.open, reason: "a string body is not sealed")
        }
        let (kind, body) = try open(sealed)
        switch kind {
        case .binary:
            return .binary(body)
        case .string:
            guard let text = UTF8Text.string(body) else {
                throw RtmErrorInfo(.channelEncryptMessageFailed, operation: OperationName.Crypto.open, reason: "sealed string is not UTF-8")
            }
            return .string(text)
        }
    }

    /// `text` sealed as a string and written in standard base64, for fields that must stay a str.
    func sealText(_ text: String) throws(RtmErrorInfo) -> String {
        Data(try seal(.string, Array(text.utf8))).base64EncodedString()
    }

    /// The original of a value made by `sealText(_:)`.
    func openText(_ sealed: String) throws(RtmErrorInfo) -> String {
        guard let bytes = Data(base64Encoded: sealed) else {
            throw RtmErrorInfo(.channelEncryptMessageFailed, operation: OperationName.Crypto.open, reason: "sealed text is not base64")
        }
        guard case .string(let text) = try open(.binary(Array(bytes))) else {
            throw RtmErrorInfo(.channelEncryptMessageFailed, operation: OperationName.Crypto.open, reason: "sealed text holds binary")
        }
        return text
    }

    /// `version || nonce || AES-GCM(kind || body) || tag`.
    private func seal(_ kind: Kind, _ body: [UInt8]) throws(RtmErrorInfo) -> [UInt8] {
        var plaintext = [UInt8]()
        plaintext.reserveCapacity(1 + body.count)
        plaintext.append(kind.rawValue)
        plaintext.append(contentsOf: body)
        do {
            return try SealedPayload.seal(plaintext, key: key)
        } catch {
            throw RtmErrorInfo(.channelEncryptMessageFailed, operation: OperationName.Messages.publish, reason: error.reason)
        }
    }

    private func open(_ sealed: [UInt8]) throws(RtmErrorInfo) -> (Kind, [UInt8]) {
        let plaintext: [UInt8]
        do {
            plaintext = try SealedPayload.open(sealed, key: key)
        } catch {
            throw RtmErrorInfo(.channelEncryptMessageFailed, operation: OperationName.Crypto.open, reason: error.reason)
        }
        guard let first = plaintext.first, let kind = Kind(rawValue: first) else {
            throw RtmErrorInfo(.channelEncryptMessageFailed, operation: OperationName.Crypto.open, reason: "unknown sealed body kind")
        }
        return (kind, Array(plaintext.dropFirst()))
    }
}
