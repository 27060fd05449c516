import Foundation
import Testing
@testable import SwitchboardClient
import SwitchboardCrypto
import SwitchboardServer
import SwitchboardTesting
import SwitchboardTestKit
import SwitchboardCore

/// Client-side encryption end to end: the SDK seals every body it sends, the server routes only
/// ciphertext, receivers with the same key get the original back with its kind.
@Suite(.timeLimit(.minutes(5))) struct EncryptionTests {
    static let secretText = "meet at the old mill at dawn ✓"
    static let secretBytes: [UInt8] = Array("binary secret: launch code 0000".utf8) + [0x00, 0xFF, 0x80]

    @Test(arguments: [RtmEncryptionMode.AES128GCM, .AES256GCM])
    func clientsWithTheSameKeyExchangeStringsAndBinaryWhileTheServerSeesOnlyCiphertext(
        mode: RtmEncryptionMode
    ) async throws {
        let router = TappedRouter()
        let server = try await TestServer.start(modules: { $0.messageRouter = router })
        let (alice, aliceLog) = try makeClient("alice", server: server, configure: encrypted(mode))
        let (bob, bobLog) = try makeClient("bob", server: server, configure: encrypted(mode))
        for client in [alice, bob] {
            expectOK(await client.login(""))
            expectOK(await client.subscribe(channelName: "vault", option: nil))
        }
        let chat = RtmPublishOptions()
        chat.customType = "chat"
        expectOK(await alice.publish(channelName: "vault", message: Self.secretText, option: chat))
        expectOK(await alice.publish(channelName: "vault", data: Data(Self.secretBytes), option: nil))
        expectOK(await alice.publish(channelName: "vault", message: "", option: nil))
        let direct = RtmPublishOptions()
        direct.channelType = .user
        expectOK(await bob.publish(channelName: "alice", message: "just between us", option: direct))

        let sent: [MessagePayload] = [.string(Self.secretText), .binary(Self.secretBytes), .string("")]
        #expect(await bobLog.wait { $0.messages.count >= 3 })
        #expect(bobLog.messages.map(payload(of:)) == sent)
        #expect(bobLog.messages.first?.customType == "chat")
        #expect(bobLog.messages.allSatisfy { $0.publisher == "alice" && $0.channelName == "vault" })
        #expect(await aliceLog.wait { $0.messages.count >= 4 })
        #expect(aliceLog.messages.map(payload(of:)) == sent + [.string("just between us")])
        #expect(aliceLog.messages.last?.channelType == .user)
        #expect(await alice.undecryptableMessages == 0)
        #expect(await bob.undecryptableMessages == 0)

        // What reached the server: four bodies, all binary, none holding any plaintext, each the
        // plaintext's length plus the kind byte, version, nonce and tag, each opening under the key.
        let routed = router.tap.payloads
        #expect(routed.count == 4)
        let key = try CryptoPrimitives.deriveKey(
            mode: mode, encryptionKey: "correct horse battery staple", salt: Array(testSalt))
        let plaintexts = [Array(Self.secretText.utf8), Self.secretBytes, [], Array("just between us".utf8)]
        let kinds: [UInt8] = [0x01, 0x02, 0x01, 0x01]
        for (index, body) in routed.enumerated() {
            guard case .binary(let sealed) = body else {
                Issue.record("the server saw a str body: \(body)")
                continue
            }
            for plaintext in plaintexts where plaintext.count >= 4 {
                #expect(!contains(sealed, plaintext), "the server saw plaintext")
            }
            guard index < plaintexts.count else { continue }
            #expect(sealed.count == plaintexts[index].count + PayloadSealer.overhead)
            #expect(sealed.first == 0x01)
            let opened = try CryptoPrimitives.openSealedPayload(mode: mode, key: key, sealed: sealed)
            #expect(opened == [kinds[index]] + plaintexts[index])
        }
        for client in [alice, bob] { client.destroy() }
        await server.shutdown()
    }

    @Test func aClientWithAnotherKeyModeOrNoneGetsNothingDelivered() async throws {
        let server = try await TestServer.start()
        let (alice, _) = try makeClient("alice", server: server, configure: encrypted(.AES256GCM))
        let (bob, bobLog) = try makeClient("bob", server: server, configure: encrypted(.AES256GCM))
        let (mallory, malloryLog) = try makeClient(
            "mallory", server: server, configure: encrypted(.AES256GCM, key: "a wrong guess"))
        let (trent, trentLog) = try makeClient(
            "trent", server: server, configure: encrypted(.AES128GCM))
        let (plain, _) = try makeClient("plain", server: server)
        for client in [alice, bob, mallory, trent, plain] {
            expectOK(await client.login(""))
            expectOK(await client.subscribe(channelName: "vault", option: nil))
        }
        expectOK(await alice.publish(channelName: "vault", message: Self.secretText, option: nil))
        expectOK(await alice.publish(channelName: "vault", data: Data(Self.secretBytes), option: nil))
        // A body nobody sealed is not delivered to an encrypting client either.
        expectOK(await plain.publish(channelName: "vault", message: "in the clear", option: nil))
        expectOK(await alice.publish(channelName: "vault", message: "last", option: nil))

        #expect(await bobLog.wait { $0.messages.count >= 3 })
        #expect(bobLog.messages.map(payload(of:)) == [.string(Self.secretText), .binary(Self.secretBytes), .string("last")])
        // Each client reads its pushes independently: wait for the drop counters, not a fixed time.
        for client in [mallory, trent] {
            let deadline = ContinuousClock.now + .seconds(10)
            while await client.undecryptableMessages < 4, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(await client.undecryptableMessages == 4)
        }
        #expect(await bob.undecryptableMessages == 1)
        #expect(malloryLog.messages.isEmpty)
        #expect(trentLog.messages.isEmpty)
        for client in [alice, bob, mallory, trent, plain] { client.destroy() }
        await server.shutdown()
    }

    @Test func theServerCountsSealedBytesAgainstThePayloadLimit() async throws {
        let server = try await TestServer.start()
        let (alice, _) = try makeClient("alice", server: server, configure: encrypted(.AES128GCM))
        expectOK(await alice.login(""))
        let largest = Limits().messages.payloadMaxBytes - PayloadSealer.overhead
        expectOK(await alice.publish(channelName: "vault", message: String(repeating: "a", count: largest), option: nil))
        expectError(
            .channelMessageLengthExceedLimitation,
            await alice.publish(channelName: "vault", data: Data(count: largest + 1), option: nil))
        alice.destroy()
        await server.shutdown()
    }

    @Test func invalidParametersAreRefusedWhenTheClientIsCreated() throws {
        let cases: [(String, (RtmClientConfig) -> Void)] = [
            ("empty key", encrypted(.AES256GCM, key: "")),
            ("31-byte salt", encrypted(.AES128GCM, salt: Data(count: 31))),
            ("33-byte salt", encrypted(.AES256GCM, salt: Data(count: 33))),
            ("mode without salt", encrypted(.AES256GCM, salt: Data())),
        ]
        for (label, configure) in cases {
            let config = RtmClientConfig(appId: "test-app", userId: "alice")
            let privateConfig = RtmPrivateConfig()
            privateConfig.accessPointHosts = ["ws://127.0.0.1:9"]
            config.privateConfig = privateConfig
            configure(config)
            let error = #expect(throws: RtmErrorInfo.self, "\(label)") { try RtmClientKit(config, delegate: nil) }
            #expect(error?.errorCode == .invalidEncryptionParameter, "\(label)")
            #expect(error?.errorCode.rawValue == -10020, "\(label)")
        }
        // `.none` ignores the key and salt.
        let config = RtmClientConfig(appId: "test-app", userId: "alice")
        let privateConfig = RtmPrivateConfig()
        privateConfig.accessPointHosts = ["ws://127.0.0.1:9"]
        config.privateConfig = privateConfig
        encrypted(.none, key: "", salt: Data(count: 5))(config)
        try RtmClientKit(config, delegate: nil).destroy()
    }
}
