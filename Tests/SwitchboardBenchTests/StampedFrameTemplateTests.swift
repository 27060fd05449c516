import SwitchboardBench
import SwitchboardCore
import SwitchboardWire
import Testing

@Suite(.timeLimit(.minutes(1))) struct StampedFrameTemplateTests {
    private func publish(id: UInt32, stamp: UInt64, size: Int = 100, customType: String = "") -> [UInt8] {
        ClientFrame(
            id: id,
            .channel(
                .publish(
                    channelType: .user, channel: "b7-run", message: .binary(PayloadStamp.make(size: size, timestamp: stamp)),
                    customType: customType))
        ).encode()
    }

    /// The template written for another id and stamp is the frame the encoder makes for them.
    @Test(arguments: [8, 100, 300, 70_000])
    func aWrittenFrameIsTheEncodedOne(size: Int) throws {
        let marker: UInt64 = 0x5A17_C0DE_5A17_C0DE
        let template = try #require(StampedFrameTemplate(frame: publish(id: 0x8000_0000, stamp: marker, size: size), id: 0x8000_0000, stamp: marker))
        for (id, stamp) in [(0x8000_0001, 1), (0xFFFF_FFFF, UInt64.max), (0x8123_4567, 0x0102_0304_0506_0708)] as [(UInt32, UInt64)] {
            let written = [UInt8](unsafeUninitializedCapacity: template.count) { buffer, count in
                template.write(id: id, stamp: stamp, into: UnsafeMutableRawBufferPointer(buffer))
                count = template.count
            }
            #expect(written == publish(id: id, stamp: stamp, size: size))
        }
    }

    /// No template from a frame where the id or the stamp is missing or could be read twice.
    @Test func anAmbiguousOrMissingMarkerMakesNoTemplate() {
        let marker: UInt64 = 0x5A17_C0DE_5A17_C0DE
        // An id below 2^31 is not written as a uint32.
        #expect(StampedFrameTemplate(frame: publish(id: 7, stamp: marker), id: 7, stamp: marker) == nil)
        #expect(StampedFrameTemplate(frame: publish(id: 0x8000_0000, stamp: 1), id: 0x8000_0000, stamp: marker) == nil)
        // The stamp's bytes also in the custom type: two places to write it.
        let twice = String(decoding: withUnsafeBytes(of: UInt64(0x4142_4344_4546_4748).littleEndian) { Array($0) }, as: UTF8.self)
        #expect(
            StampedFrameTemplate(
                frame: publish(id: 0x8000_0000, stamp: 0x4142_4344_4546_4748, customType: twice), id: 0x8000_0000,
                stamp: 0x4142_4344_4546_4748) == nil)
    }
}
