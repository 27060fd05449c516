import Testing
@testable import SwitchboardTransport

/// Sends text and binary messages of the sizes that cross every frame-length encoding over an
/// echoing connection, checks each comes back unchanged and in order, then closes normally.
func expectEchoRoundTrip(
    over connection: WebSocketConnection, seenBy client: RecordingHandler,
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    var expected: [WebSocketMessage] = []
    for size in [0, 125, 126, 65536] {
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        connection.sendBinary(bytes)
        connection.sendText(String(repeating: "é", count: size / 2))
        expected += [.binary(bytes), .text(String(repeating: "é", count: size / 2))]
    }
    let id = connection.id
    #expect(await client.wait { $0.messages.filter { $0.id == id }.count == expected.count }, sourceLocation: sourceLocation)
    #expect(client.messages(for: id) == expected, sourceLocation: sourceLocation)
    connection.close(code: .normalClosure, reason: "done")
    #expect(await client.wait { !$0.closed.isEmpty }, sourceLocation: sourceLocation)
    #expect(client.closed.first?.code == .normalClosure, sourceLocation: sourceLocation)
}
