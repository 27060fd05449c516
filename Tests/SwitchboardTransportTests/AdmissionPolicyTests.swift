import Testing
@testable import SwitchboardTransport

/// The pure pieces of admission control: per-address ledger, frame rate, Origin allow-list.
@Suite(.timeLimit(.minutes(5))) struct AdmissionPolicyTests {
    @Test func ledgerCapsEachAddressAndReleasesOnce() {
        var ledger = AddressLedger(cap: 2, exempt: ["127.0.0.1"])
        var admitted: [Bool] = []
        for (id, address) in [(1, "10.0.0.1"), (2, "10.0.0.1"), (3, "10.0.0.1"), (4, "10.0.0.2")] {
            admitted.append(ledger.admit(UInt64(id), address: address))
        }
        #expect(admitted == [true, true, false, true])
        let loopback = (10..<20).map { ledger.admit(UInt64($0), address: "127.0.0.1") }
        #expect(loopback.allSatisfy { $0 })
        ledger.release(1)
        ledger.release(1)
        ledger.release(99)
        #expect(ledger.count(for: "10.0.0.1") == 1)
        let afterRelease = [ledger.admit(5, address: "10.0.0.1"), ledger.admit(6, address: "10.0.0.1")]
        #expect(afterRelease == [true, false])
    }

    @Test func hostIsTheAddressWithoutThePort() {
        #expect(AddressLedger.host(of: "192.0.2.7:51000") == "192.0.2.7")
        #expect(AddressLedger.host(of: "[2001:db8::1]:443") == "2001:db8::1")
        #expect(AddressLedger.host(of: "unknown") == "unknown")
    }

    @Test func frameRateAllowsABurstThenTheRate() {
        let start = Duration.seconds(1_000)
        var limiter = FrameRateLimiter(framesPerSecond: 10)
        let burst = [limiter.admit(10, at: start), limiter.admit(1, at: start)]
        #expect(burst == [true, false])
        var refilled = FrameRateLimiter(framesPerSecond: 10)
        let half = start + .milliseconds(500)
        let later = start + .seconds(60)
        let steps = [
            refilled.admit(10, at: start), refilled.admit(5, at: half), refilled.admit(1, at: half),
            // Idle time refills up to one burst, no more.
            refilled.admit(10, at: later), refilled.admit(1, at: later),
        ]
        #expect(steps == [true, true, false, true, false])
    }

    @Test func originsCompareWithoutCaseOrTrailingSlash() {
        let allowed = OriginPolicy.normalized(["https://App.example/"])
        #expect(OriginPolicy.allows("https://app.example", allowed: allowed))
        #expect(!OriginPolicy.allows("https://app.example.evil", allowed: allowed))
        #expect(!OriginPolicy.allows("null", allowed: allowed))
        #expect(OriginPolicy.allows(nil, allowed: allowed))
        #expect(OriginPolicy.allows("https://anything", allowed: nil))
    }

    @Test func handshakeFromAnotherOriginGets403() throws {
        let handshake = ServerHandshake(subprotocol: nil, requireSubprotocol: false, allowedOrigins: ["https://a.example"])
        let request = { (origin: String) in
            Array(("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Origin: \(origin)\r\n\r\n").utf8)
        }
        guard case .failure(let rejected) = handshake.respond(to: request("https://b.example")) else {
            Issue.record("accepted a foreign origin")
            return
        }
        #expect(rejected.status == 403)
        #expect(String(decoding: rejected.response, as: UTF8.self).hasPrefix("HTTP/1.1 403 Forbidden"))
        guard case .success = handshake.respond(to: request("https://a.example")) else {
            Issue.record("refused an allowed origin")
            return
        }
    }

    @Test func parserCountsEveryFrame() throws {
        var parser = WebSocketParser(role: .server, maxMessageBytes: 1024)
        parser.append(
            wireFrame(fin: false, opcode: 2, payload: [1]) + wireFrame(opcode: 9, payload: [])
                + wireFrame(fin: false, opcode: 0, payload: []) + wireFrame(opcode: 0, payload: [2]))
        var events: [WebSocketEvent] = []
        while let event = try parser.next() { events.append(event) }
        #expect(events == [.ping([]), .message(.binary([1, 2]))])
        #expect(parser.framesParsed == 4)
    }
}
