import SwitchboardCore

/// `mintToken`: a login token, or a token that joins a stream channel (`streamChannel`), in the
/// 007 (default) or 006 format, signed with the app's certificate by the crypto module (the
/// server needs `--app-certificate` for the app; without any, 501).
extension APIMethod {
    static let tokens = [APIMethod("mintToken", mintToken)]

    /// `{"token": …, "expiresAt": Unix seconds or null}`.
    private static func mintToken(_ params: inout APIParameters, _ api: APIContext) async throws(APIFailure) -> JSONValue {
        let app = try api.app(&params)
        let userId = try params.string("userId")
        try api.check { () throws(RtmError) in try Validation.checkUserId(userId, limits: api.limits, operation: params.method) }
        let formatName = try params.optionalString("format") ?? TokenFormat.v007.rawValue
        guard let format = TokenFormat(rawValue: formatName) else { throw .invalid(params.method, "format must be \"007\" or \"006\"") }
        let streamChannel = try params.optionalString("streamChannel")
        if let streamChannel {
            try api.check { () throws(RtmError) in
                try Validation.checkChannelName(streamChannel, limits: api.limits, operation: params.method)
            }
        }
        let expire = try params.integer("expireSeconds", in: 0...Int64(UInt32.max), default: 3600)
        try params.finish()
        let minted = try await api.request(
            MintToken(appId: app, userId: userId, format: format, streamChannel: streamChannel, expireSeconds: UInt32(expire)))
        return .object([("token", .string(minted.token)), ("expiresAt", minted.expiresAt.map { .int($0) } ?? .null)])
    }
}
