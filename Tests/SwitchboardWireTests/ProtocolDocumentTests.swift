import Foundation
import Testing
import SwitchboardCore
import SwitchboardTestKit
import SwitchboardWire

/// One frame example of docs/PROTOCOL.md: a fenced `msgpack` block of hex.
struct DocumentedFrame: CustomTestStringConvertible {
    /// The line of the block's opening fence.
    let line: Int
    let bytes: [UInt8]

    var testDescription: String { "PROTOCOL.md line \(line)" }

    /// The frame's `"t"`.
    var type: String? { (try? MessagePackValue.decode(bytes))?["t"]?.stringValue }

    /// Every example of the document, in order.
    static let all: [DocumentedFrame] = {
        let path = ProcessRunner.repositoryRoot().appendingPathComponent("docs/PROTOCOL.md").path
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return lines.indices.compactMap { index in
            guard lines[index].trimmingCharacters(in: .whitespaces) == "```msgpack" else { return nil }
            let body = lines[(index + 1)...].prefix { !$0.hasPrefix("```") }.joined()
            return DocumentedFrame(line: index + 1, bytes: SwitchboardWireTests.bytes(hex: body))
        }
    }()
}

/// Every frame example of docs/PROTOCOL.md, checked two ways: by this codec (each decodes to a
/// typed frame that encodes to the same bytes) and, independently, by PyPI's `msgpack`
/// (`tools/check_protocol_examples.py`: the bytes are `packb` of the documented form). The Python
/// peers' own encoders are checked against the document too (`--selftest-encoding`).
@Suite("docs/PROTOCOL.md, every family", .timeLimit(.minutes(2)))
struct ProtocolDocumentTests {
    /// One frame type of each family the document describes: session, messages, streams,
    /// presence, storage, locks, extensions.
    static let familyTypes: Set<String> = [
        "login", "loginOk", "publish", "message", "error", "closing", "joinTopic", "topic", "whoNow", "presence",
        "setChannelMetadata", "storage", "setLock", "lockEvent", "x.announce", "x.announcement",
    ]

    @Test func everyFamilyHasExamples() {
        let types = Set(DocumentedFrame.all.compactMap(\.type))
        #expect(Self.familyTypes.subtracting(types).isEmpty, "no example of \(Self.familyTypes.subtracting(types).sorted())")
    }

    @Test(arguments: DocumentedFrame.all)
    func theCodecDecodesAndEncodesTheSameBytes(example: DocumentedFrame) throws {
        let value = try MessagePackValue.decode(example.bytes)
        #expect(pack(value) == example.bytes, "not in the shortest form")
        let type = try #require(value["t"]?.stringValue)
        if value["id"] != nil && !["ok", "error", "loginOk"].contains(type) {
            #expect(hex(try ClientFrame.decode(example.bytes).encode()) == hex(example.bytes))
        } else {
            #expect(hex(try ServerFrame.decode(example.bytes).encode()) == hex(example.bytes))
        }
    }

    /// The examples of the families the older tests do not build from typed values.
    static let typedExamples: [(frame: Either, hex: String)] = [
        (.client(.storage(id: 5, .writeChannel(
            .set, channelType: .message, channel: "room",
            data: Metadata(items: [MetadataItem(key: "topic", value: "hello")]),
            options: MetadataOptions(recordTs: true), lock: nil))),
         "87a174b27365744368616e6e656c4d65746164617461a2696405ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6dad6d"
         + "616a6f725265766973696f6effa56974656d739182a36b6579a5746f706963a576616c7565a568656c6c6fa87265636f72645473c3"),
        (.server(.answer(id: 6, .storage(.channelMetadata(Metadata(
            majorRevision: 12, items: [MetadataItem(key: "topic", value: "hello", revision: 12, updateTs: 1_700_000_000_000)]))))),
         "85a174a26f6ba2696406a6726573756c74b26765744368616e6e656c4d65746164617461ad6d616a6f725265766973696f6e0ca56974"
         + "656d739184a36b6579a5746f706963a576616c7565a568656c6c6fa87265766973696f6e0ca87570646174655473cf0000018bcfe56800"),
        (.server(.push(.storage(StorageEvent(
            channelType: .message, storageType: .channel, eventType: .update, target: "room",
            data: Metadata(majorRevision: 12, items: [
                MetadataItem(key: "topic", value: "hello", revision: 12, updateTs: 1_700_000_000_000),
            ]),
            timestamp: 1_700_000_000_001)))),
         "88a174a773746f72616765ab6368616e6e656c5479706501ab73746f726167655479706502a96576656e745479706503a6746172676574"
         + "a4726f6f6dad6d616a6f725265766973696f6e0ca56974656d739184a36b6579a5746f706963a576616c7565a568656c6c6fa8726576"
         + "6973696f6e0ca87570646174655473cf0000018bcfe56800a974696d657374616d70cf0000018bcfe56801"),
        (.client(.storage(id: 8, .subscribeUser(userId: "alice"))),
         "83a174b5737562736372696265557365724d65746164617461a2696408a6757365724964a5616c696365"),
        (.client(ClientFrame(id: 7, .extension(ExtensionOperation("announce", body: .string("fire drill at noon"))))),
         "83a174aa782e616e6e6f756e6365a2696407a4626f6479b266697265206472696c6c206174206e6f6f6e"),
        (.server(.push(.extension(ExtensionPush(name: "announcement", body: .string("fire drill at noon"))))),
         "82a174ae782e616e6e6f756e63656d656e74a4626f6479b266697265206472696c6c206174206e6f6f6e"),
        (.server(.answer(id: 7, .extension(ExtensionAnswer("announce", body: .string("2"))))),
         "84a174a26f6ba2696407a6726573756c74aa782e616e6e6f756e6365a4626f6479a132"),
    ]

    /// A frame of either direction.
    enum Either {
        case client(ClientFrame)
        case server(ServerFrame)

        var encoded: [UInt8] {
            switch self {
            case .client(let frame): frame.encode()
            case .server(let frame): frame.encode()
            }
        }
    }

    @Test func storageAndExtensionExamplesAreWhatTypedFramesEncodeTo() {
        let documented = Set(DocumentedFrame.all.map { hex($0.bytes) })
        for (frame, expected) in Self.typedExamples {
            #expect(hex(frame.encoded) == expected)
            #expect(documented.contains(expected), "\(expected) is not in PROTOCOL.md")
        }
    }

    @Test func pythonMsgpackAgreesWithEveryExample() async throws {
        let output = try await ProcessRunner.python("check_protocol_examples.py", [])
        #expect(output.status == 0, "\(output.text)")
        let types = DocumentedFrame.all.compactMap(\.type)
        #expect(types.count > 30)
        #expect(output.text.contains("\(types.count) examples checked: \(types.joined(separator: " "))\n"), "\(output.text)")
    }

    @Test(arguments: ["peer.py", "peer_lock.py", "peer_presence.py"])
    func aPythonPeersEncoderMatchesTheDocument(script: String) async throws {
        let output = try await ProcessRunner.python(script, ["--selftest-encoding"])
        #expect(output.status == 0, "\(output.text)")
        #expect(output.text.contains(" passed, 0 failed") && !output.text.contains(": 0 passed"), "\(output.text)")
    }
}
