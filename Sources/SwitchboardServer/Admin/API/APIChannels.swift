import Foundation
import SwitchboardCore

/// The server's overview of an app: its channels in use (`channels`, paged, by a pattern).
extension APIMethod {
    static let channels = [APIMethod("channels", listChannels)]

    /// The most channels on one page.
    static let channelPageLimit: Int64 = 1_000

    /// `{"channels": [{channelType, channel, members, users}], "nextPage": …}`, sorted by type,
    /// then name; `nextPage` is empty on the last page.
    private static func listChannels(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let caller = try api.caller(&params)
        let type = try params.optionalChannelType([.message, .stream])
        let pattern = try params.optionalString("pattern") ?? ""
        guard pattern.unicodeScalars.count <= 2 * api.limits.names.channelNameMaxLength else {
            throw .invalid(params.method, "pattern is over \(2 * api.limits.names.channelNameMaxLength) characters")
        }
        let after = try ChannelPageToken.decode(try params.optionalString("page") ?? "", method: params.method)
        let limit = try params.integer("limit", in: 1...channelPageLimit, default: 100)
        try params.finish()
        let page = try await api.request(
            ListChannels(caller: caller, channelType: type, pattern: ChannelPattern(pattern), after: after, limit: Int(limit)))
        let channels = page.channels.map { summary in
            JSONValue.object(address(summary.channel).members + [("members", .int(summary.members)), ("users", .int(summary.users))])
        }
        return .object([("channels", .array(channels)), ("nextPage", .string(page.next.map(ChannelPageToken.encode) ?? ""))])
    }
}

/// The `nextPage` of a channel list: the last channel listed, as an opaque token.
enum ChannelPageToken {
    static func encode(_ channel: ChannelAddress) -> String {
        Data("\(channel.type.rawValue):\(channel.name)".utf8).base64EncodedString()
    }

    /// The channel a token names; nil for the empty token (the first page).
    static func decode(_ token: String, method: String) throws(APIFailure) -> ChannelAddress? {
        guard !token.isEmpty else { return nil }
        guard let data = Data(base64Encoded: token), let text = String(data: data, encoding: .utf8),
            let colon = text.firstIndex(of: ":"), let raw = Int(text[..<colon]), let type = RtmChannelType(rawValue: raw)
        else { throw .invalid(method, "page is not a page token of this method") }
        return ChannelAddress(type, String(text[text.index(after: colon)...]))
    }
}

extension APIContext {
    /// The answer of a module that may not be running: nil when no module handles `request`.
    func optionalRequest<R: BusRequest>(_ request: R) async throws(APIFailure) -> R.Response? {
        guard bus.hasHandler(R.self) else { return nil }
        return try await self.request(request)
    }
}
