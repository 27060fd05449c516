import Testing
import SwitchboardCore
import SwitchboardWire

/// The hex examples in docs/PROTOCOL.md, checked against the real encoder and decoders.
@Suite("docs/PROTOCOL.md examples", .timeLimit(.minutes(2)))
struct ProtocolExampleTests {
    static let session = SessionID(1)

    static let clientExamples: [(ClientFrame, String)] = [
        (.login(id: 1, Login(appId: "demo", userId: "alice", token: "", heartbeatInterval: 5, presenceTimeout: 300)),
         "87a174a56c6f67696ea2696401a56170704964a464656d6fa6757365724964a5616c696365a5746f6b656ea0b16865617274"
         + "62656174496e74657276616c05af70726573656e636554696d656f7574cd012c"),
        (.login(id: 1, Login(appId: "demo", userId: "alice", token: "", heartbeatInterval: 5, presenceTimeout: 300, 
                                   resume: ResumeTicket(session: session, secret: "k3y"))),
         "89a174a56c6f67696ea2696401a56170704964a464656d6fa6757365724964a5616c696365a5746f6b656ea0b16865617274"
         + "62656174496e74657276616c05af70726573656e636554696d656f7574cd012cad726573756d6553657373696f6e01ac7265"
         + "73756d65536563726574a36b3379"),
        (.subscribe(id: 2, channel: "room", features: [.message, .presence]),
         "84a174a9737562736372696265a2696402a76368616e6e656ca4726f6f6da8666561747572657305"),
        (.publish(id: 3, channelType: .message, channel: "room", message: .string("hi"), customType: ""),
         "85a174a77075626c697368a2696403ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da76d657373616765a26869"),
        (.publish(id: 4, channelType: .user, channel: "bob", message: .binary([1, 2, 3]), customType: "raw"),
         "86a174a77075626c697368a2696404ab6368616e6e656c5479706503a76368616e6e656ca3626f62a76d657373616765c40301"
         + "0203aa637573746f6d54797065a3726177"),
        (.heartbeat(id: 5), "82a174a9686561727462656174a2696405"),
    ]

    static let serverExamples: [(ServerFrame, String)] = [
        (.loginOk(id: 1, LoginAccepted(
            ticket: ResumeTicket(session: session, secret: "k3y"), resumed: false,
            heartbeatInterval: 5, presenceTimeout: 300, loss: .none)),
         "89a174a76c6f67696e4f6ba2696401a773657373696f6e01ac726573756d65536563726574a36b3379a7726573756d6564c2b1"
         + "686561727462656174496e74657276616c05af70726573656e636554696d656f7574cd012cac6c6f73744d65737361676573"
         + "00ac6c6f73744368616e6e656c7390"),
        (.ok(id: 3), "82a174a26f6ba2696403"),
        (.message(MessageDelivery(
            channelType: .message, channelName: "room", payload: .string("hi"), publisher: "alice", customType: "",
            timestamp: 1_764_400_000_123)),
         "86a174a76d657373616765ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6da76d657373616765a26869a97075"
         + "626c6973686572a5616c696365a974696d657374616d70cf0000019ace6f6c7b"),
        (.error(id: 4, RtmError(.channelReceiverOffline, operation: "publish", reason: "bob is offline")),
         "85a174a56572726f72a2696404a4636f6465d1d4e7a96f7065726174696f6ea77075626c697368a6726561736f6eae626f6220"
         + "6973206f66666c696e65"),
        (.push(.session(.tokenPrivilegeWillExpire(secondsLeft: 30))),
         "82a174b8746f6b656e50726976696c65676557696c6c457870697265ab7365636f6e64734c6566741e"),
        (.push(.session(.messagesMayBeLost(channelType: .message, channel: "room"))),
         "83a174b16d657373616765734d617942654c6f7374ab6368616e6e656c5479706501a76368616e6e656ca4726f6f6d"),
        (.closing(reason: .sameUidLogin, detail: "same user logged in elsewhere"),
         "83a174a7636c6f73696e67a6726561736f6e1ba664657461696cbd73616d652075736572206c6f6767656420696e20656c7365"
         + "7768657265"),
    ]

    @Test func clientExamplesMatchTheEncoder() throws {
        for (frame, expected) in Self.clientExamples {
            #expect(hex(frame.encode()) == expected, "\(frame.type)")
            #expect(try ClientFrame.decode(bytes(hex: expected)) == frame)
        }
    }

    @Test func serverExamplesMatchTheEncoder() throws {
        for (frame, expected) in Self.serverExamples {
            #expect(hex(frame.encode()) == expected, "\(frame.type)")
            #expect(try ServerFrame.decode(bytes(hex: expected)) == frame)
        }
    }
}
