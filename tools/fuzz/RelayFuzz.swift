/// libFuzzer target: the decoders of what nodes publish to each other over Redis (the relay
/// envelope of a delivery, the claim, moved-session, user-command and answer announcements, a
/// node's status record and app load).
///
/// Byte 0 picks the decoder; the rest is its input. No input may crash a decoder, and what one
/// accepts must encode to bytes that decode to the same value again (a round trip that loses
/// nothing), where the type has an encoder.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRelay(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch data[0] % 7 {
    case 0:
        guard let envelope = try? RelayEnvelope(decoding: bytes) else { return 0 }
        roundTrip(envelope, (try? RelayEnvelope(decoding: envelope.encoded())), "relay envelope")
    case 1:
        _ = UserClaimAnnouncement(decoding: bytes)
    case 2:
        guard let announcement = MovedSessionAnnouncement(decoding: bytes) else { return 0 }
        roundTrip(announcement, MovedSessionAnnouncement(decoding: announcement.encoded()), "moved announcement")
    case 3:
        guard let announcement = UserCommandAnnouncement(decoding: bytes) else { return 0 }
        roundTrip(announcement, UserCommandAnnouncement(decoding: announcement.encoded()), "user command")
    case 4:
        guard let answer = UserCommandAnswer(decoding: bytes) else { return 0 }
        let again = UserCommandAnswer(decoding: answer.encoded())
        if again?.id != answer.id || again?.sessions != answer.sessions || again?.refusal?.code != answer.refusal?.code {
            fatalError("user command answer changed in a round trip")
        }
    case 5:
        guard let status = try? NodeStatusRecord.decoded(bytes) else { return 0 }
        roundTrip(status, try? NodeStatusRecord.decoded(NodeStatusRecord.encoded(status)), "node status")
    default:
        guard let load = NodeStatusRecord.decodedLoad(bytes) else { return 0 }
        roundTrip(load, NodeStatusRecord.decodedLoad(NodeStatusRecord.encoded(load)), "app load")
    }
    return 0
}

private func roundTrip<Value: Equatable>(_ value: Value, _ again: Value?, _ what: String) {
    if again != value { fatalError("\(what) changed in a round trip: \(value) → \(String(describing: again))") }
}
