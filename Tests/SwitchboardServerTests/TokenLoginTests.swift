import Foundation
import Testing
import SwitchboardClient
import SwitchboardCore
import SwitchboardCrypto
import SwitchboardServer
import SwitchboardTesting

/// With an app certificate the server takes only tokens signed with it.
@Suite struct TokenLoginTests {
    static let appId = "970CA35de60c44645bbae8a215061b33"
    static let certificate = "5CFd2fd1755d40ecb72977518be15d3b"

    func client(_ userId: String, _ server: SwitchboardServer) throws -> RtmClientKit {
        let config = RtmClientConfig(appId: Self.appId, userId: userId)
        config.privateConfig = RtmPrivateConfig()
        config.privateConfig?.accessPointHosts = [server.url]
        return try RtmClientKit(config, delegate: nil)
    }

    func token(for userId: String, expire: UInt32 = 3600) throws -> String {
        try TokenMinter.mint007(
            appId: Self.appId, appCertificate: Self.certificate, userId: userId,
            issuedAt: UInt32(Date().timeIntervalSince1970), expireSeconds: expire, salt: 99)
    }

    @Test func onlySignedTokensForTheRightUserLogIn() async throws {
        let server = try await TestServer.start(modules: {
            $0.extensions.append(Crypto(credentials: [Self.appId: Self.certificate]))
        })
        let alice = try client("alice", server)
        let events = alice.events
        let states = Task {
            var seen: [RtmLinkStateEvent] = []
            for await event in events {
                if case .linkState(let change) = event { seen.append(change) }
                if seen.count == 2 { break }
            }
            return seen
        }
        let refused = await alice.login("not a token")
        #expect(refused.1?.errorCode == .invalidToken)
        let changes = await states.value
        #expect(changes.map(\.currentState) == [.connecting, .failed])
        #expect(changes.last?.reasonCode == .invalidToken)
        #expect(await alice.login(try token(for: "bob")).1?.errorCode == .invalidToken)
        #expect(await alice.login(try token(for: "alice")).1 == nil)
        alice.destroy()
        await server.shutdown()
    }

    @Test func developmentModeTakesAnyToken() async throws {
        let server = try await TestServer.start()
        let alice = try client("alice", server)
        #expect(await alice.login("whatever").1 == nil)
        alice.destroy()
        await server.shutdown()
    }
}
