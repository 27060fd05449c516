import Foundation
import Testing
import SwitchboardTestKit

@testable import SwitchboardServer

/// docs/openapi.yaml: valid OpenAPI 3.1 (PyPI's openapi-spec-validator), one path per method the
/// server serves and none it does not, and a live server answering as it says.
@Suite(.timeLimit(.minutes(3))) struct OpenAPIDocumentTests {
    static var document: String { ProcessRunner.repositoryRoot().appendingPathComponent("docs/openapi.yaml").path }

    @Test func theDocumentIsValidAndDocumentsExactlyTheMethodsServed() async throws {
        let output = try await ProcessRunner.python("check_openapi.py", ["validate", Self.document])
        #expect(output.status == 0, "\(output.text)")
        let lines = output.text.split(separator: "\n").map(String.init)
        #expect(lines.first == "valid", "\(output.text)")
        let documented = Set(lines.dropFirst())
        let served = Set(ServerAPI.methodNames)
        #expect(documented.subtracting(served).isEmpty, "documented, not served: \(documented.subtracting(served).sorted())")
        #expect(served.subtracting(documented).isEmpty, "served, not documented: \(served.subtracting(documented).sorted())")
        #expect(served.count == ServerAPI.methodNames.count, "a method is served twice")
    }

    @Test func aLiveServerHasEveryDocumentedMethodAndAnswersInTheDocumentedShapes() async throws {
        let (server, admin) = try await ServerAPITests.start()
        let output = try await ProcessRunner.python(
            "check_openapi.py", ["serve", Self.document, "\(admin)", ServerAPITests.key, ServerAPITests.appId])
        await server.shutdown()
        #expect(output.status == 0, "\(output.text)")
        #expect(output.text.contains("0 problems"), "\(output.text)")
    }
}
