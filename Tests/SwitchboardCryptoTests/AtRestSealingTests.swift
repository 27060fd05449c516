import Foundation
import Testing
import SwitchboardCore
import SwitchboardCrypto
import SwitchboardTestKit

/// Encryption at rest as the storage module sees it: requests on the bus.
@Suite(.timeLimit(.minutes(2))) struct AtRestSealingTests {
    let key = try! StorageKey(bytes: (0..<32).map { UInt8($0) })

    func bus(_ key: StorageKey) async -> ModuleHarness { await ModuleHarness(modules: [AtRestSealing(key: key)]) }

    @Test func sealedValuesOpenWithTheSameKeyAndPlaceOnly() async throws {
        let harness = await bus(key)
        let values = [Array("hello".utf8), [], Array(repeating: 7, count: 16 * 1024)]
        let places = [Array("a".utf8), Array("b".utf8), Array("c".utf8)]
        let sealed = try await harness.bus.request(SealAtRest(plaintexts: values, associatedData: places))
        #expect(sealed.map(\.count) == values.map { $0.count + 29 })
        #expect(sealed[0][0] == AtRestSealing.version)
        #expect(!sealed[0].contains(subsequence: Array("hello".utf8)))
        #expect(try await harness.bus.request(OpenAtRest(sealed: sealed, associatedData: places)) == values)
        // A fresh nonce every time.
        #expect(try await harness.bus.request(SealAtRest(plaintexts: [values[0]], associatedData: [places[0]])) != [sealed[0]])
        // Another place, a changed byte, another key: refused.
        await #expect(throws: RtmError.self) { try await harness.bus.request(OpenAtRest(sealed: [sealed[0]], associatedData: [places[1]])) }
        var changed = sealed[0]
        changed[changed.count - 1] ^= 1
        await #expect(throws: RtmError.self) { try await harness.bus.request(OpenAtRest(sealed: [changed], associatedData: [places[0]])) }
        let other = await bus(try StorageKey(bytes: Array(repeating: 9, count: 32)))
        await #expect(throws: RtmError.self) { try await other.bus.request(OpenAtRest(sealed: [sealed[0]], associatedData: [places[0]])) }
        await harness.stop()
        await other.stop()
    }

    @Test func keyFilesHoldHexOrRawBytes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchboard-key-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let hexFile = directory.appendingPathComponent("hex")
        try Data((String(repeating: "0a", count: 32) + "\n").utf8).write(to: hexFile)
        _ = try StorageKey(contentsOfFile: hexFile.path)
        let rawFile = directory.appendingPathComponent("raw")
        try Data(repeating: 0xEE, count: 32).write(to: rawFile)
        _ = try StorageKey(contentsOfFile: rawFile.path)
        let badFile = directory.appendingPathComponent("bad")
        try Data("short".utf8).write(to: badFile)
        #expect(throws: StorageKeyError.self) { try StorageKey(contentsOfFile: badFile.path) }
        do {
            _ = try StorageKey(contentsOfFile: directory.appendingPathComponent("missing").path)
            Issue.record("read a missing file")
        } catch {
            #expect(error.message.contains("missing"))
        }
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<$0 + subsequence.count]) == subsequence }
    }
}
