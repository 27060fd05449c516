import SwitchboardCore

/// What a detached session missed, kept in order up to a count and a byte bound.
///
/// Once either bound is reached, that push and every later one are dropped and counted, with the
/// channels they were for (at most `maxLostChannels` of them), so the resumed client gets a
/// clean prefix of what it missed and a report of the rest — never a gap in the middle.
struct ResumeBuffer<Frame> {
    private(set) var frames: [Frame] = []
    private(set) var bytes = 0
    private(set) var loss = ResumeLoss.none
    let maxFrames: Int
    let maxBytes: Int
    /// How many lost channels the report names at most.
    let maxLostChannels = 64

    init(maxFrames: Int, maxBytes: Int) {
        self.maxFrames = maxFrames
        self.maxBytes = maxBytes
    }

    /// Keeps `frame` of `size` bytes for `channel`, or counts it as lost when over a bound.
    mutating func append(_ frame: Frame, size: Int, channel: ChannelKey?) {
        if loss.droppedPushes == 0, frames.count < maxFrames, bytes + size <= maxBytes {
            frames.append(frame)
            bytes += size
            return
        }
        loss.droppedPushes += 1
        if let channel, loss.channels.count < maxLostChannels, !loss.channels.contains(channel) {
            loss.channels.append(channel)
        }
    }

    /// Hands over everything kept and what was lost.
    func drain() -> (frames: [Frame], loss: ResumeLoss) { (frames, loss) }
}
