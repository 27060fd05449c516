import Foundation
import Testing
@testable import SwitchboardClient
import SwitchboardCrypto
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardCore

/// The sealed-body format, and an independent reader of it (tools/open_sealed.py, PyPI `cryptography`).
@Suite(.timeLimit(.minutes(5))) struct PayloadSealerTests {
    static func sealer(_ mode: RtmEncryptionMode, key: String = "k3y ✓") throws -> PayloadSealer {
        try PayloadSealer(.init(mode: mode, key: key, salt: Array(testSalt)))
    }

    @Test func sealingKeepsTheKindAndUsesAFreshNonceEveryTime() throws {
        let sealer = try Self.sealer(.AES256GCM)
        let text = MessagePayload.string("héllo")
        let first = try sealer.seal(text)
        let second = try sealer.seal(text)
        guard case .binary(let a) = first, case .binary(let b) = second else {
            Issue.record("a sealed body must be binary")
            return
        }
        #expect(a != b)
        #expect(a[1..<13] != b[1..<13])
        #expect(a.count == "héllo".utf8.count + PayloadSealer.overhead)
        #expect(try sealer.open(first) == text)
        #expect(try sealer.open(sealer.seal(.binary([0x01, 0x68]))) == .binary([0x01, 0x68]))
        #expect(try sealer.open(sealer.seal(.binary([]))) == .binary([]))
        #expect(try sealer.openText(sealer.sealText("state ✓")) == "state ✓")
    }

    @Test func whatDoesNotOpenIsRefusedWithChannelEncryptMessageFailed() throws {
        let sealer = try Self.sealer(.AES128GCM)
        guard case .binary(var sealed) = try sealer.seal(.string("secret")) else { return }
        let refused: [(String, PayloadSealer, MessagePayload)] = [
            ("another key", try Self.sealer(.AES128GCM, key: "other"), .binary(sealed)),
            ("another mode", try Self.sealer(.AES256GCM), .binary(sealed)),
            ("a plain str", sealer, .string("secret")),
            ("too short", sealer, .binary(Array(sealed.prefix(20)))),
        ]
        for (label, opener, body) in refused {
            let error = #expect(throws: RtmErrorInfo.self, "\(label)") { try opener.open(body) }
            #expect(error?.errorCode == .channelEncryptMessageFailed, "\(label)")
        }
        sealed[sealed.count - 1] ^= 0x01
        #expect(throws: RtmErrorInfo.self) { try sealer.open(.binary(sealed)) }
        // A well-sealed body with an unknown kind byte is refused too.
        let key = try CryptoPrimitives.deriveKey(mode: .AES128GCM, encryptionKey: "k3y ✓", salt: Array(testSalt))
        let oddKind = try CryptoPrimitives.sealedPayload(mode: .AES128GCM, key: key, plaintext: [0x07, 0x41])
        #expect(throws: RtmErrorInfo.self) { try sealer.open(.binary(oddKind)) }
        let stringKind = try CryptoPrimitives.sealedPayload(mode: .AES128GCM, key: key, plaintext: [0x01, 0x41])
        #expect(try sealer.open(.binary(stringKind)) == .string("A"))
    }

    @Test func theExamplesOfTheProtocolDocumentOpen() throws {
        let salt = Array(UInt8(0)..<32)
        let examples: [(RtmEncryptionMode, String)] = [
            (.AES128GCM, "01000102030405060708090a0becd4b87cec1798942e461fb2771fe6a7dc727a"),
            (.AES256GCM, "01000102030405060708090a0b0aa5d078b78a2179871dba9dc9b7c43790e0d2"),
        ]
        for (mode, sealedHex) in examples {
            let sealer = try PayloadSealer(.init(mode: mode, key: "k3y", salt: salt))
            let sealed = stride(from: 0, to: sealedHex.count, by: 2).map { offset in
                let start = sealedHex.index(sealedHex.startIndex, offsetBy: offset)
                return UInt8(sealedHex[start..<sealedHex.index(start, offsetBy: 2)], radix: 16)!
            }
            #expect(try sealer.open(.binary(sealed)) == .string("hi"))
        }
        let key128 = try CryptoPrimitives.deriveKey(mode: .AES128GCM, encryptionKey: "k3y", salt: salt)
        #expect(hex(key128) == "c8bd1c6c7e506d4a77e2f64db4594dd5")
    }

    @Test(arguments: [RtmEncryptionMode.AES128GCM, .AES256GCM])
    func thePythonToolOpensWhatTheSDKSeals(mode: RtmEncryptionMode) async throws {
        let key = "k3y ✓"
        let sealer = try Self.sealer(mode, key: key)
        let modeName = mode == .AES128GCM ? "AES128GCM" : "AES256GCM"
        let text = "hello from Swift ✓"
        guard case .binary(let sealedText) = try sealer.seal(.string(text)),
            case .binary(let sealedBytes) = try sealer.seal(.binary([0x00, 0xFF, 0x10]))
        else {
            Issue.record("a sealed body must be binary")
            return
        }
        let common = ["--mode", modeName, "--key", key, "--salt", hex(testSalt), "--kind"]

        let string = try await Self.openSealed(common + [hex(sealedText)])
        #expect(string.status == 0, "\(string.text)")
        #expect(string.text == "string\n\(text)\n")

        let binary = try await Self.openSealed(common + [hex(sealedBytes)])
        #expect(binary.status == 0, "\(binary.text)")
        #expect(binary.text == "binary\n00ff10\n")

        let state = try await Self.openSealed(common + ["--base64", try sealer.sealText("away")])
        #expect(state.text == "string\naway\n")

        let wrongKey = try await Self.openSealed(
            ["--mode", modeName, "--key", "other", "--salt", hex(testSalt), hex(sealedText)])
        #expect(wrongKey.status == 1, "\(wrongKey.text)")
        #expect(!wrongKey.text.contains(text))
    }

    /// Runs tools/open_sealed.py to its end (at most 60 s) and returns its exit status and output.
    static func openSealed(_ arguments: [String]) async throws -> (status: Int32, text: String) {
        try await ProcessRunner.python("open_sealed.py", arguments)
    }
}
