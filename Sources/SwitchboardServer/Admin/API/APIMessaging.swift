import Foundation
import SwitchboardCore

/// `publish` and `broadcast`: messages from the server, through the message router as a client's
/// publish goes, with the same limits (payload size, customType, channel names, the channel's
/// rate, over which a message is discarded and the call still succeeds).
extension APIMethod {
    static let messaging = [APIMethod("publish", publish), APIMethod("broadcast", broadcast)]

    /// The most channels one `broadcast` names.
    static let broadcastChannelLimit = 100

    /// One message to a message channel, or to a user (`channelType` "user", `channel` the user
    /// id): `{}` for a channel, `{"online": Bool}` for a user, false when the user had no session.
    private static func publish(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params, from: true)
        let type = try params.channelType([.message, .user], default: .message)
        let channel = try params.string("channel")
        let (payload, customType) = try params.message()
        try params.finish()
        do {
            _ = try await api.bus.request(
                Publish(caller: caller, channelType: type, channelName: channel, payload: payload, customType: customType))
        } catch where error.code == .channelReceiverOffline {
            return .object([("online", false)])
        } catch {
            throw APIFailure(error)
        }
        return type == .user ? .object([("online", true)]) : .object([])
    }

    /// One message to many message channels (`channels`), in order: `{"published": n}`. Every
    /// name is checked before the first message goes.
    private static func broadcast(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params, from: true)
        let channels = try params.strings("channels", limit: broadcastChannelLimit)
        guard !channels.isEmpty else { throw .invalid(params.method, "channels is missing or empty") }
        let (payload, customType) = try params.message()
        try params.finish()
        let method = params.method
        for channel in channels {
            try api.check { () throws(RtmError) in try Validation.checkChannelName(channel, limits: api.limits, operation: method) }
        }
        for channel in channels {
            _ = try await api.request(
                Publish(caller: caller, channelType: .message, channelName: channel, payload: payload, customType: customType))
        }
        return .object([("published", .int(channels.count))])
    }
}

extension APIParameters {
    /// A message: `message` (a string) or `messageBase64` (binary, base64), and `customType`.
    mutating func message() throws(APIFailure) -> (MessagePayload, String) {
        let text = try optionalString("message")
        let encoded = try optionalString("messageBase64")
        let customType = try optionalString("customType") ?? ""
        switch (text, encoded) {
        case (let text?, nil): return (.string(text), customType)
        case (nil, let encoded?):
            guard let data = Data(base64Encoded: encoded) else { throw .invalid(method, "messageBase64 is not base64") }
            return (.binary(Array(data)), customType)
        default: throw .invalid(method, "give either message or messageBase64")
        }
    }
}
