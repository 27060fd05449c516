import SwitchboardCore

/// The recent pushes of one session, numbered from the session's start, so a client that comes
/// back saying how many it received gets the rest again.
///
/// Two bounds apply: a small one while the session has a connection (enough to cover pushes lost
/// on a connection that died before the server noticed) and a large one while it is detached
/// (everything missed, up to the resume bound). Past a bound the oldest pushes are forgotten; the
/// channels they belonged to are remembered (at most `maxLostChannels`) to report what a resume
/// could not restore.
struct PushHistory<Frame> {
    /// Limits on what is kept.
    struct Bounds: Equatable {
        var frames: Int
        var bytes: Int
    }

    private struct Entry {
        let frame: Frame
        let size: Int
        let channel: ChannelKey?
    }

    /// How many pushes the session was given so far.
    private(set) var sent: UInt64 = 0
    private var entries: [Entry] = []
    /// Index in `entries` of the oldest kept push.
    private var head = 0
    private var bytes = 0
    /// Channels of forgotten pushes in order of first loss, each with the number of its latest
    /// forgotten push; `forgottenIndex` finds a channel's place without a scan.
    private var forgotten: [(channel: ChannelKey, lastNumber: UInt64)] = []
    private var forgottenIndex: [ChannelKey: Int] = [:]
    private(set) var bounds: Bounds
    let maxLostChannels = 64

    init(bounds: Bounds) { self.bounds = bounds }

    /// How many pushes are kept.
    var keptCount: Int { entries.count - head }

    /// Numbers the next push and keeps it, forgetting the oldest past the bounds.
    mutating func record(_ frame: Frame, size: Int, channel: ChannelKey?) {
        sent += 1
        entries.append(Entry(frame: frame, size: size, channel: channel))
        bytes += size
        trim()
    }

    /// Applies new bounds (the session gained or lost its connection).
    mutating func rebound(_ newBounds: Bounds) {
        bounds = newBounds
        trim()
    }

    /// The kept pushes numbered after `received` (the client's count), in order, and what it
    /// missed that is no longer kept.
    func unreceived(after received: UInt64) -> (frames: [Frame], loss: ResumeLoss) {
        let firstKept = sent - UInt64(keptCount)
        let from = max(received, firstKept)
        guard from < sent else { return ([], .none) }
        let frames = entries[(head + Int(from - firstKept))...].map(\.frame)
        guard received < firstKept else { return (frames, .none) }
        let channels = forgotten.filter { $0.lastNumber > received }.map(\.channel)
        return (frames, ResumeLoss(droppedPushes: Int(firstKept - received), channels: channels))
    }

    private mutating func trim() {
        while keptCount > bounds.frames || (bytes > bounds.bytes && keptCount > 0) {
            let oldest = entries[head]
            let number = sent - UInt64(keptCount) + 1
            bytes -= oldest.size
            head += 1
            if let channel = oldest.channel { remember(channel, number) }
        }
        // Compact once the dead prefix is at least half of the storage.
        if head > 32 && head * 2 >= entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }

    private mutating func remember(_ channel: ChannelKey, _ number: UInt64) {
        if let index = forgottenIndex[channel] {
            forgotten[index].lastNumber = number
        } else if forgotten.count < maxLostChannels {
            forgottenIndex[channel] = forgotten.count
            forgotten.append((channel, number))
        }
    }
}
