import SwitchboardCore

/// Stream channels: the client makes their instances; each `RtmStreamChannel` has the calls.
extension RtmClientKit {
    /// Creates the instance of stream channel `channelName` (nothing is sent until `join`).
    /// Throws `invalidChannelName` for a bad name, and `instanceAlreadyReleased` (-10018, the
    /// reference's code for a repeated stream-channel instantiation) while another live instance
    /// has the name.
    public func createStreamChannel(_ channelName: String) throws -> RtmStreamChannel {
        if let refused = refusedAfterDestroy() { throw refused }
        try settings.checkService(.stream, OperationName.Stream.createStreamChannel.rawValue)
        do {
            try Validation.checkChannelName(channelName, limits: Limits(), operation: OperationName.Stream.createStreamChannel.rawValue)
        } catch {
            throw RtmErrorInfo(error)
        }
        guard streamChannels.claim(channelName) else {
            throw RtmErrorInfo(
                .instanceAlreadyReleased, operation: OperationName.Stream.createStreamChannel,
                reason: "a stream channel instance for \(channelName) exists; destroy it first")
        }
        return RtmStreamChannel(kit: self, channelName: channelName)
    }
}
