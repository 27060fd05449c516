import Testing
@testable import SwitchboardTransport

@Suite(.timeLimit(.minutes(5))) struct WebSocketParserTests {
    @Test(arguments: [0, 1, 125, 126, 127, 65535, 65536, 70000])
    func maskedBinaryLengths(_ length: Int) {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let (events, error) = parseAll(wireFrame(opcode: 2, payload: payload))
        #expect(error == nil)
        #expect(events == [.message(.binary(payload))])
    }

    @Test func headerLengthEncodings() {
        #expect(wireFrame(opcode: 2, payload: [UInt8](repeating: 0, count: 125))[1] & 0x7F == 125)
        #expect(wireFrame(opcode: 2, payload: [UInt8](repeating: 0, count: 126))[1] & 0x7F == 126)
        #expect(wireFrame(opcode: 2, payload: [UInt8](repeating: 0, count: 65536))[1] & 0x7F == 127)
    }

    @Test func unmaskedFramesForClientRole() {
        let (events, error) = parseAll(
            wireFrame(opcode: 1, payload: Array("hi".utf8), mask: nil), role: .client)
        #expect(error == nil)
        #expect(events == [.message(.text("hi"))])
    }

    @Test func byteByByteDelivery() {
        let bytes = wireFrame(opcode: 1, payload: Array("hello, world".utf8))
            + wireFrame(opcode: 9, payload: [1, 2, 3])
        var parser = WebSocketParser(role: .server, maxMessageBytes: 1024)
        var events: [WebSocketEvent] = []
        for byte in bytes {
            parser.append([byte])
            while let event = try? parser.next() { events.append(event) }
        }
        #expect(events == [.message(.text("hello, world")), .ping([1, 2, 3])])
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func fragmentedTextWithInterleavedControlFrames() {
        let text = Array("κόσμε".utf8)
        let bytes = wireFrame(fin: false, opcode: 1, payload: Array(text[0..<3]))
            + wireFrame(opcode: 9, payload: Array("p".utf8))
            + wireFrame(fin: false, opcode: 0, payload: Array(text[3..<7]))
            + wireFrame(opcode: 10, payload: [])
            + wireFrame(opcode: 0, payload: Array(text[7...]))
        let (events, error) = parseAll(bytes)
        #expect(error == nil)
        #expect(events == [.ping(Array("p".utf8)), .pong([]), .message(.text("κόσμε"))])
    }

    @Test func fragmentedBinary() {
        let bytes = wireFrame(fin: false, opcode: 2, payload: [1, 2])
            + wireFrame(fin: false, opcode: 0, payload: [])
            + wireFrame(opcode: 0, payload: [3])
        #expect(parseAll(bytes).events == [.message(.binary([1, 2, 3]))])
    }

    @Test func closeFrames() {
        #expect(parseAll(wireFrame(opcode: 8, payload: [])).events == [.close(code: nil, reason: "")])
        #expect(
            parseAll(wireFrame(opcode: 8, payload: [0x03, 0xE8] + Array("bye".utf8))).events
                == [.close(code: .normalClosure, reason: "bye")])
        #expect(
            parseAll(wireFrame(opcode: 8, payload: [0x0F, 0xA0])).events
                == [.close(code: WebSocketCloseCode(rawValue: 4000), reason: "")])
    }

    static let protocolErrors: [(String, [UInt8], UInt16)] = [
        ("unmasked client frame", wireFrame(opcode: 2, payload: [1], mask: nil), 1002),
        ("rsv1", wireFrame(rsv: 4, opcode: 2, payload: [1]), 1002),
        ("rsv3", wireFrame(rsv: 1, opcode: 1, payload: []), 1002),
        ("opcode 3", wireFrame(opcode: 3, payload: []), 1002),
        ("opcode 11", wireFrame(opcode: 11, payload: []), 1002),
        ("fragmented ping", wireFrame(fin: false, opcode: 9, payload: []), 1002),
        ("long ping", wireFrame(opcode: 9, payload: [UInt8](repeating: 0, count: 126)), 1002),
        ("lone continuation", wireFrame(opcode: 0, payload: [1]), 1002),
        (
            "new message mid-fragment",
            wireFrame(fin: false, opcode: 1, payload: [0x61]) + wireFrame(opcode: 1, payload: [0x62]), 1002
        ),
        ("close with 1 byte", wireFrame(opcode: 8, payload: [3]), 1002),
        ("close 1005", wireFrame(opcode: 8, payload: [0x03, 0xED]), 1002),
        ("close 1006", wireFrame(opcode: 8, payload: [0x03, 0xEE]), 1002),
        ("close 1004", wireFrame(opcode: 8, payload: [0x03, 0xEC]), 1002),
        ("close 1015", wireFrame(opcode: 8, payload: [0x03, 0xF7]), 1002),
        ("close 999", wireFrame(opcode: 8, payload: [0x03, 0xE7]), 1002),
        ("close 2999", wireFrame(opcode: 8, payload: [0x0B, 0xB7]), 1002),
        ("close 5000", wireFrame(opcode: 8, payload: [0x13, 0x88]), 1002),
        ("close bad utf8", wireFrame(opcode: 8, payload: [0x03, 0xE8, 0xFF]), 1007),
        ("bad utf8 text", wireFrame(opcode: 1, payload: [0x61, 0xC0, 0x80]), 1007),
        ("truncated utf8 text", wireFrame(opcode: 1, payload: [0xE2, 0x82]), 1007),
        ("64-bit length msb", wireFrame(opcode: 2, payload: [], lengthOverride: 1 << 63), 1002),
    ]

    @Test(arguments: 0..<protocolErrors.count)
    func protocolErrorsMapToCloseCodes(_ index: Int) {
        let (name, bytes, code) = Self.protocolErrors[index]
        let error = parseAll(bytes).error
        #expect(error?.code.rawValue == code, "\(name)")
    }

    @Test func errorIsSticky() {
        var parser = WebSocketParser(role: .server, maxMessageBytes: 100)
        parser.append(wireFrame(opcode: 3, payload: []) + wireFrame(opcode: 2, payload: [1]))
        #expect(throws: WebSocketProtocolError.self) { try parser.next() }
        #expect(throws: WebSocketProtocolError.self) { try parser.next() }
    }

    @Test func serverFrameMaskedIsErrorForClient() {
        #expect(parseAll(wireFrame(opcode: 2, payload: [1]), role: .client).error?.code == .protocolError)
    }

    @Test func oversizeRejectedFromHeaderAlone() {
        // Only the header of a 1 MiB frame arrives: the parser must refuse it without the payload.
        let header = Array(wireFrame(opcode: 2, payload: [], lengthOverride: 1 << 20).prefix(14))
        let result = parseAll(header, maxMessageBytes: 65536 + 1024)
        #expect(result.error?.code == .messageTooBig)
    }

    @Test func oversizeAcrossFragments() {
        let bytes = wireFrame(fin: false, opcode: 2, payload: [UInt8](repeating: 1, count: 60))
            + wireFrame(opcode: 0, payload: [UInt8](repeating: 1, count: 50))
        #expect(parseAll(bytes, maxMessageBytes: 100).error?.code == .messageTooBig)
        #expect(parseAll(bytes, maxMessageBytes: 110).error == nil)
    }

    @Test func utf8SplitAcrossFragments() {
        let euro: [UInt8] = [0xE2, 0x82, 0xAC]
        let bytes = wireFrame(fin: false, opcode: 1, payload: [0x61, euro[0]])
            + wireFrame(fin: false, opcode: 0, payload: [euro[1]])
            + wireFrame(opcode: 0, payload: [euro[2], 0x62])
        #expect(parseAll(bytes).events == [.message(.text("a€b"))])
    }

    @Test func invalidUTF8FailsBeforeMessageEnds() {
        // The first fragment is already invalid: no need to wait for the rest.
        let bytes = wireFrame(fin: false, opcode: 1, payload: [0x61, 0xF5])
        #expect(parseAll(bytes).error?.code == .invalidPayload)
    }

    @Test func invalidUTF8FailsBeforeFrameEnds() {
        // Only part of the frame's payload has arrived, and it is already invalid.
        let full = wireFrame(opcode: 1, payload: [0x61, 0xC0, 0x80] + [UInt8](repeating: 0x61, count: 200))
        #expect(parseAll(Array(full.prefix(12))).error?.code == .invalidPayload)
    }

    @Test func outboundFrameRoundTrip() {
        for size in [0, 125, 126, 65535, 65536] {
            let payload = [UInt8](repeating: 7, count: size)
            let frame = OutboundFrame.binary(payload)
            #expect(frame.headerLength == FrameHeader.encodedLength(payloadLength: size, masked: false))
            #expect(parseAll(frame.bytes, role: .client).events == [.message(.binary(payload))])
            let masked = frame.masked(with: MaskKeys.next())
            #expect(parseAll(masked.bytes, role: .server).events == [.message(.binary(payload))])
        }
        #expect(parseAll(OutboundFrame.text("héllo").bytes, role: .client).events == [.message(.text("héllo"))])
    }

    @Test func aOneFrameBinaryMessageIsLentInPlaceAndEverythingElseComesAsEvents() {
        let first = (0..<40).map { UInt8($0) }
        var read = wireFrame(opcode: 0x2, payload: first) + wireFrame(opcode: 0x1, payload: Array("hi".utf8))
            + wireFrame(fin: false, opcode: 0x2, payload: [1]) + wireFrame(opcode: 0x0, payload: [2])
            + wireFrame(opcode: 0x2, payload: [7, 8])
        var parser = WebSocketParser(role: .server, maxMessageBytes: 1024)
        var lent: [[UInt8]] = []
        var events: [WebSocketEvent] = []
        var counts: [Int] = []
        let lentWithin = read.withUnsafeMutableBytes { bytes in
            var within = true
            try? parser.parseRead(bytes) { frame, framesParsed in
                counts.append(framesParsed)
                switch frame {
                case .binary(let message):
                    lent.append(Array(message))
                    within = within && message.baseAddress! >= UnsafeRawPointer(bytes.baseAddress!)
                        && message.baseAddress! + message.count <= UnsafeRawPointer(bytes.baseAddress! + bytes.count)
                case .event(let event): events.append(event)
                }
                return true
            }
            return within
        }
        #expect(lent == [first, [7, 8]])
        #expect(lentWithin, "a one-frame binary message is lent in the read's own bytes")
        #expect(Array(read[6..<46]) == first, "and unmasked there")
        #expect(events == [.message(.text("hi")), .message(.binary([1, 2]))])
        #expect(counts == [1, 2, 4, 5])
        #expect(parser.framesParsed == 5)
        #expect(parser.bufferedByteCount == 0, "nothing of a read of whole frames is kept")
    }

    @Test func aReadKeepsOnlyItsIncompleteLastFrameAndTheNextReadFinishesIt() {
        let first = wireFrame(opcode: 0x2, payload: [1, 2, 3])
        let second = wireFrame(opcode: 0x2, payload: Array(repeating: 9, count: 40))
        let third = wireFrame(opcode: 0x2, payload: [4])
        var parser = WebSocketParser(role: .server, maxMessageBytes: 1024)
        let one = parseReads([first + second.prefix(10)], parser: &parser)
        #expect(one.events == [.message(.binary([1, 2, 3]))])
        #expect(parser.bufferedByteCount == 10, "the incomplete frame's bytes, and nothing before them")
        let two = parseReads([Array(second.dropFirst(10)) + third], parser: &parser)
        #expect(two.events == [.message(.binary(Array(repeating: 9, count: 40))), .message(.binary([4]))])
        #expect(parser.bufferedByteCount == 0)
        #expect(one.lent == 1)
        #expect(two.lent == 0, "a read that follows kept bytes is parsed after them, in the parser's buffer")
    }

    @Test func aReadParsedInPlaceAndStoppedEarlyKeepsNothing() {
        let frames = wireFrame(opcode: 0x2, payload: [1]) + wireFrame(opcode: 0x2, payload: [2]) + wireFrame(opcode: 0x2, payload: [3])
        var parser = WebSocketParser(role: .server, maxMessageBytes: 1024)
        let read = parseReads([frames + wireFrame(opcode: 0x2, payload: [4]).prefix(3)], parser: &parser, stopAfter: 2)
        #expect(read.events == [.message(.binary([1])), .message(.binary([2]))])
        #expect(parser.bufferedByteCount == 0, "a read stopped early keeps nothing for later")
    }

    @Test(arguments: [0, 3, 125, 126, 65_535, 65_536, 70_000])
    func aFrameWrittenInPlaceCarriesWhatWasWrittenWithItsHeader(size: Int) {
        let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let frame = OutboundFrame.binary(payloadCount: size) { buffer in
            #expect(buffer.count == size)
            payload.withUnsafeBytes { if !$0.isEmpty { buffer.copyMemory(from: $0) } }
            return size
        }
        #expect(frame.headerLength == FrameHeader.encodedLength(payloadLength: size, masked: false))
        #expect(frame.count == frame.headerLength + size)
        #expect(Array(frame.payload) == payload)
        #expect(parseAll(frame.bytes, role: .client).events == [.message(.binary(payload))])
        let masked = frame.masked(with: MaskKeys.next())
        #expect(parseAll(masked.bytes, role: .server).events == [.message(.binary(payload))])
    }

    @Test func closeReasonIsTruncatedToControlFrameLimit() {
        let frame = OutboundFrame.close(code: .goingAway, reason: String(repeating: "é", count: 100))
        #expect(frame.count <= 127)
        let events = parseAll(frame.bytes, role: .client).events
        #expect(events == [.close(code: .goingAway, reason: String(repeating: "é", count: 61))])
    }

    @Test func aReleasedBufferKeepsWhatIsNotYetConsumedAndParsesOn() throws {
        var parser = WebSocketParser(role: .server, maxMessageBytes: 1024)
        let first = wireFrame(opcode: 0x2, payload: [1, 2, 3])
        let second = wireFrame(opcode: 0x2, payload: Array(repeating: 9, count: 40))
        parser.append(first + second.prefix(10))
        #expect(try parser.next() == .message(.binary([1, 2, 3])))
        #expect(try parser.next() == nil)
        parser.releaseBufferIfConsumed()
        #expect(parser.bufferedByteCount == 10, "a partial frame is kept")
        parser.append(Array(second.dropFirst(10)))
        #expect(try parser.next() == .message(.binary(Array(repeating: 9, count: 40))))
        parser.releaseBufferIfConsumed()
        #expect(parser.bufferedByteCount == 0)
        parser.append(first)
        #expect(try parser.next() == .message(.binary([1, 2, 3])))
        #expect(parser.framesParsed == 3)
    }
}
