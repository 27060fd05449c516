import Synchronization
import SwitchboardBench
import SwitchboardCore

extension BenchRun {
    /// Presence at scale: `--connections` users log in, then join one message channel with the
    /// presence feature (messages and presence, the reference default), then each sets a one-key
    /// state there. Past the interval threshold the channel sends interval events; the run waits
    /// until every member heard, from its snapshot, its real-time joins and the interval events,
    /// every user it must hear of (the first 512 in join order and everyone who joined after it)
    /// and every user's state. Then `--publishers` pagers page through the channel with `whoNow`,
    /// without and with states, for `--duration` seconds each.
    func presence(_ context: RunContext, into line: inout JSONLine) async throws {
        let users = options.connections
        let channel = "presence-\(tag)"
        let address = ChannelAddress(.message, channel)
        let arrivals = IntervalArrivals()
        let listeners = (0..<users).map { _ in PresenceListener(users: users, intervals: arrivals) }
        let clients = listeners.enumerated().map { index, listener in
            BenchClient(userId: "u\(index)-\(tag)", run: context, onPush: { bytes, _ in listener.received(bytes) })
        }
        let start = usage.snapshot()
        let loggedIn = try await timed(clients, "log in") { try await $0.connectAndLogIn(url: options.url) }
        // A join is done when its snapshot has arrived: the subscribe's `ok` comes first, and the
        // presence module takes the join in after it.
        let joins = try await timed(clients, "join") { client in
            try await client.subscribe(channel, features: [.presence, .message])
        } until: {
            !listeners.contains { !$0.snapshotDone }
        }
        let order = try await joinOrder(of: address, asking: clients[0], users: users)
        let states = try await timed(clients, "set state") { client in
            guard let number = UserBitmap.number(of: client.userId) else { return }
            try await client.expectOK(.presence(.setState(channel: address, items: [StateItem(key: "s", value: "v\(number)")])))
        }

        // Interval events: everything gathered goes out within one period of the last change;
        // the wait goes on while they keep arriving.
        let waitStart = MonotonicClock.now()
        let drain = UInt64(options.drain * 1e9)
        let firstDeadline = waitStart + UInt64(options.presenceInterval * 1e9) + drain
        while MonotonicClock.now() < max(firstDeadline, arrivals.last + drain),
            listeners.contains(where: { $0.statesHeard < users })
        {
            try await Task.sleep(for: .milliseconds(100))
        }
        let waited = Double(MonotonicClock.now() - waitStart) / 1e9
        let heard = usage.snapshot()
        let missingJoins = zip(order.rankOfUser, listeners).reduce(0) { sum, pair in
            sum + Self.missingJoins(heard: pair.1.joined, rank: pair.0, order: order.users)
        }
        let missingStates = listeners.reduce(0) { $0 + users - $1.statesHeard }
        let counts = listeners.reduce(into: PresenceListener.Counts()) { $0.add($1.counts) }

        line.add("users", users)
        line.add("logins_per_s", Double(users) / loggedIn.seconds, digits: 0)
        line.add("join_s", joins.seconds)
        line.add("join_us_per_user", joins.seconds / Double(users) * 1e6, digits: 1)
        line.add("join_answer_p50_ms", Double(joins.latencies.value(atQuantile: 0.5)) / 1e6)
        line.add("join_answer_p99_ms", Double(joins.latencies.value(atQuantile: 0.99)) / 1e6)
        line.add("join_server_cpu_us_per_user", joins.serverCPU.map { $0 / Double(users) * 1e6 }, digits: 1)
        line.add("set_state_us_per_user", states.seconds / Double(users) * 1e6, digits: 1)
        line.add("set_state_server_cpu_us_per_user", states.serverCPU.map { $0 / Double(users) * 1e6 }, digits: 1)
        line.add("interval_wait_s", waited)
        line.add("interval_delivery_spread_s", arrivals.spread)
        line.add("presence_frames", counts.frames)
        line.add("presence_mb", Double(counts.bytes) / 1_048_576, digits: 1)
        line.add("presence_kb_per_member", Double(counts.bytes) / 1024 / Double(users), digits: 1)
        line.add("snapshot_frames", counts.snapshotFrames)
        line.add("snapshot_users", counts.snapshotUsers)
        line.add("realtime_events", counts.realTimeEvents)
        line.add("interval_frames", counts.intervalFrames)
        line.add("interval_joins", counts.intervalJoins)
        line.add("interval_states", counts.intervalStates)
        line.add("unexpected_events", counts.unexpected)
        line.add("wrong_states", counts.wrongStates)
        line.add("missing_joins", missingJoins)
        line.add("missing_states", missingStates)
        addRSS([("before", start), ("logged_in", joins.before), ("joined", states.before), ("heard", heard)], users, into: &line)

        var pagingLost = 0
        for includeState in [false, true] {
            pagingLost += try await pageWhoNow(address, users: users, includeState: includeState, context, into: &line)
        }
        line.add(
            "lost", missingJoins + missingStates + counts.unexpected + counts.wrongStates + order.errors + pagingLost)
        _ = await forEach(clients) { try await $0.logOut() }
    }

    // MARK: Phases

    /// One phase over every client: how long it took, each client's latency, the server's CPU.
    struct Phase {
        var seconds: Double
        var latencies: LatencyHistogram
        var serverCPU: Double?
        var before: ResourceUsage.Snapshot
    }

    /// Runs `body` for every client, `--connect-concurrency` at once, then waits until `done`
    /// (up to a minute); fails if any fails.
    private func timed(
        _ clients: [BenchClient], _ what: String, _ body: @escaping @Sendable (BenchClient) async throws -> Void,
        until done: () -> Bool = { true }
    ) async throws -> Phase {
        let latencies = Mutex(LatencyHistogram())
        let before = usage.snapshot()
        let result = await forEach(clients) { client in
            let sent = MonotonicClock.now()
            try await body(client)
            let took = MonotonicClock.now() - sent
            latencies.withLock { $0.record(took) }
        }
        guard result.failed == 0 else {
            throw BenchClient.Failure(description: "\(result.failed) clients failed to \(what): \(result.firstError ?? "")")
        }
        let deadline = MonotonicClock.now() + 60_000_000_000
        while !done() {
            guard MonotonicClock.now() < deadline else { throw BenchClient.Failure(description: "\(what) did not finish in a minute") }
            try await Task.sleep(for: .milliseconds(5))
        }
        let after = usage.snapshot()
        return Phase(
            seconds: Double(after.time - before.time) / 1e9, latencies: latencies.withLock { $0 },
            serverCPU: ResourceUsage.Interval(from: before, to: after).serverCPU, before: before)
    }

    /// The channel's users in join order, from one `whoNow` pass, and mistakes in that pass.
    private func joinOrder(
        of channel: ChannelAddress, asking client: BenchClient, users: Int
    ) async throws -> (users: [Int], rankOfUser: [Int], errors: Int) {
        var order: [Int] = []
        var page = ""
        repeat {
            let answer = try await client.request(.presence(.whoNow(channel: channel, includeUserId: true, includeState: false, page: page)))
            guard case .answer(_, .presence(.whoNow(let result))) = answer else {
                throw BenchClient.Failure(description: "whoNow: unexpected \(answer.type)")
            }
            order += result.users.compactMap { UserBitmap.number(of: $0.userId) }
            page = result.nextPage
        } while !page.isEmpty
        var rank = Array(repeating: users, count: users)
        var errors = 0
        for (position, user) in order.enumerated() {
            if user < users, rank[user] == users { rank[user] = position } else { errors += 1 }
        }
        errors += rank.filter { $0 == users }.count
        return (order, rank, errors)
    }

    /// The users a member of join rank `rank` (0-based) did not hear join though it must have:
    /// its snapshot lists the first `limits.presence.snapshotMaxUsers` in join order (itself included),
    /// and it hears of everyone who joins after it.
    static func missingJoins(heard: UserBitmap, rank: Int, order: [Int]) -> Int {
        let snapshot = min(rank + 1, 512)
        var missing = 0
        for position in order.indices where position < snapshot || position > rank {
            if !heard.contains(order[position]) { missing += 1 }
        }
        return missing
    }

    /// Pages through `channel` with `--publishers` pagers for `--duration` seconds (after the
    /// warm-up); adds pages per second and the page latency; returns the bad pages and passes.
    private func pageWhoNow(
        _ channel: ChannelAddress, users: Int, includeState: Bool, _ context: RunContext, into line: inout JSONLine
    ) async throws -> Int {
        let suffix = includeState ? "with_state" : "without_state"
        let pagers = (0..<options.publishers).map { _ in WhoNowPager(channel: channel, users: users, includeState: includeState) }
        let clients = pagers.enumerated().map { index, pager in
            BenchClient(userId: "q\(index)\(includeState ? "s" : "")-\(tag)", run: context, publisher: pager.publisher())
        }
        let connected = await forEach(clients) { try await $0.connectAndLogIn(url: options.url) }
        guard connected.failed == 0 else {
            throw BenchClient.Failure(description: "whoNow pagers failed to log in: \(connected.firstError ?? "")")
        }
        let publishers = clients.compactMap(\.publisher)
        for publisher in publishers { publisher.start() }
        let window = try await measureWindow(context) { publishers.reduce(0) { $0 + $1.accepted } }
        for publisher in publishers { publisher.stop() }
        while publishers.contains(where: { $0.inFlight > 0 }) { try await Task.sleep(for: .milliseconds(10)) }
        let interval = window.interval
        let latencies = publishers.compactMap(\.answerLatencies).reduce(into: LatencyHistogram()) { $0.merge($1) }
        let passes = pagers.reduce((completed: 0, bad: 0)) { ($0.completed + $1.passes.completed, $0.bad + $1.passes.bad) }
        let wrong = publishers.reduce(0) { $0 + $1.wrong + $1.refused }
        line.add("whonow_\(suffix)_pages_per_s", Double(window.after - window.before) / interval.seconds, digits: 0)
        line.add("whonow_\(suffix)_p50_ms", Double(latencies.value(atQuantile: 0.5)) / 1e6)
        line.add("whonow_\(suffix)_p99_ms", Double(latencies.value(atQuantile: 0.99)) / 1e6)
        line.add("whonow_\(suffix)_passes", passes.completed)
        line.add("whonow_\(suffix)_bad", wrong + passes.bad)
        line.add("whonow_\(suffix)_server_cpu_cores", interval.serverCPU.map { $0 / interval.seconds })
        line.add("whonow_\(suffix)_bench_cpu_cores", interval.benchCPU / interval.seconds)
        _ = await forEach(clients) { try await $0.logOut() }
        return wrong + passes.bad
    }

    /// The server's RSS at each named moment, and the growth per user from login to the end.
    private func addRSS(_ moments: [(String, ResourceUsage.Snapshot)], _ users: Int, into line: inout JSONLine) {
        for (name, snapshot) in moments {
            line.add("server_rss_\(name)_mb", snapshot.server.map { Double($0.residentBytes) / 1_048_576 }, digits: 1)
        }
        let loggedIn = moments.first { $0.0 == "logged_in" }?.1.server?.residentBytes
        let heard = moments.last?.1.server?.residentBytes
        if let loggedIn, let heard {
            line.add("server_rss_presence_bytes_per_user", (heard - loggedIn) / max(users, 1))
        }
    }
}
