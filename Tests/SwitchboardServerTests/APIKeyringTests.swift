import Foundation
import Testing

@testable import SwitchboardServer

/// The server API's keys: loaded from a file or given, matched by digest, reloaded in place.
@Suite(.timeLimit(.minutes(1))) struct APIKeyringTests {
    let first = "first-key-0123456789", second = "second-key-0123456789"

    @Test func aFileOfKeysSkipsBlankLinesAndCommentsAndReloadsInPlace() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchboard-keys-\(UUID())")
        defer { try? FileManager.default.removeItem(at: file) }
        try "# operators\n\n  \(first)  \n\(second)\n".write(to: file, atomically: true, encoding: .utf8)
        let keyring = try APIKeyring(.file(file.path))
        #expect(keyring.count == 2)
        #expect(keyring.match(first) != nil && keyring.match(second) != nil)
        #expect(keyring.match(first) != keyring.match(second))
        #expect(keyring.match("first-key-012345678") == nil)
        #expect(keyring.match("") == nil)

        try "\(second)\n".write(to: file, atomically: true, encoding: .utf8)
        try keyring.reload()
        #expect(keyring.match(first) == nil && keyring.match(second) != nil)

        // A reload that fails keeps the keys in force.
        try "# nobody\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(throws: APIKeyring.LoadError.self) { try keyring.reload() }
        try FileManager.default.removeItem(at: file)
        #expect(throws: APIKeyring.LoadError.self) { try keyring.reload() }
        #expect(keyring.match(second) != nil)
    }

    @Test func shortKeysAndNoKeysAreRefused() {
        #expect(throws: APIKeyring.LoadError.self) { try APIKeyring(.keys([])) }
        #expect(throws: APIKeyring.LoadError.self) { try APIKeyring(.keys([first, "short"])) }
        #expect(throws: APIKeyring.LoadError.self) { try APIKeyring(.file("/nonexistent/keys")) }
    }

    @Test func everyRefusalCodeMapsToTheStatusTheDocumentSays() {
        #expect(APIFailure.status(of: .storageOutdatedRevision) == 409)
        #expect(APIFailure.status(of: .operationRateExceedLimitation) == 429)
        #expect(APIFailure.status(of: .presenceUserNotExist) == 404)
        #expect(APIFailure.status(of: .serviceNotSupport) == 501)
        #expect(APIFailure.status(of: .notInitialized) == 503)
        #expect(APIFailure.status(of: .invalidChannelName) == 400)
        #expect(APIFailure.status(of: .storageOperationFailed) == 500)
    }
}
