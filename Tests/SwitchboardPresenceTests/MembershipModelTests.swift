import Testing
import SwitchboardCore
import SwitchboardPresence

/// Random joins, feature changes and leaves, checked after each step against a plain model: who
/// listens, who shows, and the roster's join order (through many roster compactions).
@Suite(.timeLimit(.minutes(2))) struct MembershipModelTests {
    private struct Model {
        var features: [SessionID: ChannelFeatures] = [:]
        /// The users who show, in the order they (last) started showing.
        var shown: [UserID] = []

        func shows(_ user: UserID, _ userOf: (SessionID) -> UserID) -> Bool {
            features.contains { userOf($0.key) == user && $0.value.isVisible }
        }
    }

    @Test(arguments: [3, 17])
    func listenersRosterAndOccupancyFollowEveryChange(seed: UInt64) async throws {
        let store = InMemoryPresenceStore()
        let channels = [ChannelKey(app: "app", .message, "a"), ChannelKey(app: "app", .stream, "b")]
        let choices: [ChannelFeatures] = [[.message], [.message, .presence], [.message, .beQuiet], [.presence, .beQuiet]]
        func userOf(_ session: SessionID) -> UserID { "u\(session.rawValue % 3)" }
        var models = Array(repeating: Model(), count: channels.count)
        var state = seed
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for _ in 0..<1_500 {
            let which = next(channels.count)
            let session = SessionID(UInt64(next(8)))
            let caller = Caller(app: "app", userId: userOf(session), session: session)
            let user = caller.userId
            var model = models[which]
            let showedBefore = model.shows(user, userOf)
            if next(3) == 0 {
                _ = try await store.leave(caller, channels[which])
                model.features[session] = nil
            } else {
                let features = choices[next(choices.count)]
                _ = try await store.join(caller, channels[which], features: features)
                model.features[session] = features
            }
            let showsNow = model.shows(user, userOf)
            if !showedBefore && showsNow { model.shown.append(user) }
            if showedBefore && !showsNow { model.shown.removeAll { $0 == user } }
            models[which] = model

            let listeners = try await store.listeners(of: channels[which])
            #expect(listeners.count == Set(listeners).count)
            #expect(Set(listeners) == Set(model.features.filter { $0.value.contains(.presence) }.keys))
            #expect(try await store.occupancy(of: channels[which]) == model.shown.count)
            let page = try await store.members(of: channels[which], after: 0, limit: 100, budget: 1 << 20, withStates: false)
            #expect(page.users.map(\.userId) == model.shown)
        }
    }
}
