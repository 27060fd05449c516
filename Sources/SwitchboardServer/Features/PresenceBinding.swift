import SwitchboardCore
import SwitchboardWire

/// The presence feature: whoNow, whereNow, states and user-level presence, as presence requests.
enum PresenceBinding: FeatureBinding {
    static let unavailable: RtmErrorCode? = .presenceNotWritable

    static func answer(_ operation: PresenceOperation, caller: Caller, bus: EventBus) async throws(RtmError) -> Answer {
        switch operation {
        case .whoNow(let channel, let includeUserId, let includeState, let page):
            let request = WhoNow(caller: caller, channel: channel, includeUserId: includeUserId, includeState: includeState, page: page)
            return .presence(.whoNow(try await bus.request(request)))
        case .whereNow(let userId):
            return .presence(.whereNow(try await bus.request(WhereNow(caller: caller, userId: userId))))
        case .setState(let channel, let items):
            _ = try await bus.request(SetPresenceState(caller: caller, channel: channel, items: items))
        case .getState(let channel, let userId):
            return .presence(.getState(try await bus.request(GetPresenceState(caller: caller, channel: channel, userId: userId))))
        case .removeState(let channel, let keys):
            _ = try await bus.request(RemovePresenceState(caller: caller, channel: channel, keys: keys))
        case .getUserPresence(let userIds):
            return .presence(.getUserPresence(try await bus.request(GetUserPresence(caller: caller, userIds: userIds))))
        }
        return .done
    }
}
