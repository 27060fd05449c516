import Foundation
import Testing
import SwitchboardCore
import SwitchboardWire

/// The presence examples of docs/PROTOCOL.md §12.6, checked against the real encoder and decoders.
@Suite(.timeLimit(.minutes(2))) struct PresenceProtocolExampleTests {
    static let room = ChannelAddress(.message, "room")
    static let time: UInt64 = 1_764_400_000_123

    static let clientExamples: [(ClientFrame, String)] = [
        (.setState(id: 6, channel: room, items: [StateItem(key: "mood", value: "happy")]),
         "85a174a87365745374617465a2696406ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da56974656d7381a46d6f6f64a56861707079"),
        (.whoNow(id: 7, channel: room, includeUserId: true, includeState: true),
         "86a174a677686f4e6f77a2696407ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6dad696e636c756465557365724964c3ac696e636c7564655374617465c3"),
    ]

    static let serverExamples: [(ServerFrame, String)] = [
        (.answer(id: 7, .presence(.whoNow(WhoNowPage(
            totalOccupancy: 2, users: [UserState(userId: "alice"), UserState(userId: "bob", states: ["mood": "happy"])],
            nextPage: "")))),
         "86a174a26f6ba2696407a6726573756c74a677686f4e6f77ae746f74616c4f63637570616e637902a575736572739282a6757365724964a5616c69"
         + "6365a67374617465738082a6757365724964a3626f62a673746174657381a46d6f6f64a56861707079a86e65787450616765a0"),
        (.push(.presence(PresenceDelivery(
            type: .remoteJoinChannel, channelType: .message, channelName: "room", publisher: "bob", firstOrLast: true,
            timestamp: time))),
         "88a174a870726573656e6365a96576656e745479706503ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da97075626c6973686572"
         + "a3626f62a673746174657380a974696d657374616d70cf0000019ace6f6c7bab66697273744f724c617374c3"),
        (.push(.presence(PresenceDelivery(
            type: .remoteStateChanged, channelType: .message, channelName: "room", publisher: "bob", states: ["mood": "happy"],
            timestamp: time))),
         "87a174a870726573656e6365a96576656e745479706506ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da97075626c6973686572"
         + "a3626f62a673746174657381a46d6f6f64a56861707079a974696d657374616d70cf0000019ace6f6c7b"),
        (.push(.presence(PresenceDelivery(
            type: .interval, channelType: .message, channelName: "room", publisher: "",
            interval: PresenceIntervalInfo(joinUserList: ["carol"], timeoutUserList: ["dave"], totalOccupancy: 51),
            timestamp: time))),
         "8ca174a870726573656e6365a96576656e745479706502ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da97075626c6973686572"
         + "a0a673746174657380a974696d657374616d70cf0000019ace6f6c7bac6a6f696e557365724c69737491a56361726f6cad6c65617665557365"
         + "724c69737490af74696d656f7574557365724c69737491a464617665ad7573657253746174654c69737490ae746f74616c4f63637570616e637933"),
    ]

    @Test func theExamplesMatchTheEncoderAndTheDocument() throws {
        let document = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/PROTOCOL.md"),
            encoding: .utf8)
        for (frame, expected) in Self.clientExamples {
            #expect(hex(frame.encode()) == expected, "\(frame.type)")
            #expect(try ClientFrame.decode(bytes(hex: expected)) == frame)
            #expect(document.contains(expected), "\(frame.type) is in PROTOCOL.md")
        }
        for (frame, expected) in Self.serverExamples {
            #expect(hex(frame.encode()) == expected, "\(frame.type)")
            #expect(try ServerFrame.decode(bytes(hex: expected)) == frame)
            #expect(document.contains(expected), "\(frame.type) is in PROTOCOL.md")
        }
    }
}
