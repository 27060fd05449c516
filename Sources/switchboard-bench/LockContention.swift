import SwitchboardBench
import SwitchboardCore

extension BenchRun {
    /// Lock contention: `--publishers` clients contend for one lock of a message channel, each
    /// acquiring with `retry` (waiting in line while another holds it), releasing as soon as the
    /// lock is its own and acquiring again. From the clients' view the lock never has two holders
    /// at once, each acquisition's fencing token is larger than the one before, and once stopped
    /// every contender gets its last turn.
    func lockContention(_ context: RunContext, into line: inout JSONLine) async throws {
        let lock = LockAddress(ChannelAddress(.message, "lock-\(tag)"), "bench")
        let watch = LockWatch()
        let contenders = (0..<options.publishers).map { LockContender(index: $0, lock: lock, watch: watch) }
        let clients = contenders.map { contender in
            BenchClient(
                userId: "k\(contender.index)-\(tag)", run: context, answers: contender,
                onPush: { bytes, _ in contender.pushed(bytes, measuring: context.measuring) })
        }
        let setupStart = MonotonicClock.now()
        let connected = await forEach(clients) { try await $0.connectAndLogIn(url: options.url) }
        guard connected.failed == 0 else {
            throw BenchClient.Failure(description: "\(connected.failed) contenders failed to log in: \(connected.firstError ?? "")")
        }
        // Lock calls are for members of the channel; members without `.lock` hear no lock events.
        let subscribed = await forEach(clients) { try await $0.subscribe(lock.channel.name, features: []) }
        guard subscribed.failed == 0 else {
            throw BenchClient.Failure(description: "\(subscribed.failed) contenders failed to subscribe: \(subscribed.firstError ?? "")")
        }
        try await clients[0].expectOK(.lock(.setLock(lock, ttl: nil)))
        let setupSeconds = Double(MonotonicClock.now() - setupStart) / 1e9

        for contender in contenders { contender.start() }
        let window = try await measureWindow(context) { watch.pairs }
        for contender in contenders { contender.stop() }
        let drainDeadline = MonotonicClock.now() + UInt64(options.drain * 1e9)
        while contenders.contains(where: { !$0.isIdle }), MonotonicClock.now() < drainDeadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let stuck = contenders.count { !$0.isIdle }
        let interval = window.interval
        let pairsPerSecond = Double(window.after - window.before) / interval.seconds
        let waits = contenders.reduce(into: LatencyHistogram()) { $0.merge($1.waits) }
        let handovers = watch.handovers

        line.add("contenders", contenders.count)
        line.add("duration_s", interval.seconds)
        line.add("pairs_per_s", pairsPerSecond, digits: 0)
        line.add("handover_p50_ms", Double(handovers.value(atQuantile: 0.5)) / 1e6)
        line.add("handover_p99_ms", Double(handovers.value(atQuantile: 0.99)) / 1e6)
        line.add("wait_p50_ms", Double(waits.value(atQuantile: 0.5)) / 1e6)
        line.add("wait_p99_ms", Double(waits.value(atQuantile: 0.99)) / 1e6)
        line.add("pairs", watch.pairs)
        line.add("errors", contenders.reduce(0) { $0 + $1.errors })
        line.add("double_holds", watch.doubleHolds)
        line.add("token_regressions", watch.tokenRegressions)
        line.add("stuck", stuck)
        line.add("lost", watch.doubleHolds + watch.tokenRegressions + stuck)
        line.add("setup_s", setupSeconds)
        line.add("server_cpu_us_per_pair", interval.serverCPU.map { $0 / max(pairsPerSecond * interval.seconds, 1) * 1e6 }, digits: 1)
        addCPU(interval, serverRSS: window.end.server?.residentBytes, into: &line)
        _ = await forEach(clients) { try await $0.logOut() }
    }
}
