import Foundation
import Synchronization
import SwitchboardBench
import SwitchboardCore
import SwitchboardTransport

/// One run of one scenario, from connecting to the JSON line.
struct BenchRun {
    let options: BenchOptions
    let usage: ResourceUsage
    /// Makes user ids and channel names unique to this run, so runs against one server never
    /// share state.
    let tag = String(UInt32(truncatingIfNeeded: MonotonicClock.now() / 1000), radix: 36)

    init(options: BenchOptions) {
        self.options = options
        usage = ResourceUsage(serverPids: options.serverPids)
    }

    func run() async throws -> String {
        if options.scenario == .decode {
            var line = JSONLine()
            line.add("scenario", options.scenario.rawValue)
            if !options.label.isEmpty { line.add("label", options.label) }
            FrameDecoding(options: options).run(into: &line)
            return line.text
        }
        let wanted = options.scenario == .idle || options.scenario == .presence ? options.connections + 1024 : 65_536
        let fdLimit = ResourceUsage.raiseOpenFileLimit(wanted: wanted)
        let group = try EventLoopGroup(threads: options.threads)
        defer { group.shutdown() }
        let context = RunContext(group: group, sourceAddress: options.sourceAddress)
        var line = JSONLine()
        line.add("scenario", options.scenario.rawValue)
        if !options.label.isEmpty { line.add("label", options.label) }
        switch options.scenario {
        case .idle:
            try await idle(context, fdLimit: fdLimit, into: &line)
        case .presence:
            try await presence(context, into: &line)
        case .lock:
            try await lockContention(context, into: &line)
        case .fanout, .churn, .manyToMany, .pointToPoint, .topicFanout, .storageWrite, .storageRead, .storageFanout:
            try await traffic(context, into: &line)
        case .decode:
            preconditionFailure("decode runs without connections, above")
        }
        line.add("bench_threads", options.threads)
        line.add("nproc", ProcessInfo.processInfo.activeProcessorCount)
        line.add("loadavg_1m", ProcessSample.loadAverage(), digits: 2)
        return line.text
    }

    // MARK: Topologies

    private func topology(_ context: RunContext) -> Topology {
        var topology = Topology()
        let freeRunning = options.rate == 0
        func publisher(_ user: String, _ type: RtmChannelType, _ channel: String) -> BenchClient {
            BenchClient(
                userId: user, run: context,
                publisher: Publisher(
                    channelType: type, channel: channel, payloadSize: options.payload, window: options.window,
                    freeRunning: freeRunning))
        }
        switch options.scenario {
        case .fanout, .churn, .idle:
            let channel = "fanout-\(tag)"
            topology.publishers = (0..<options.publishers).map { publisher("p\($0)-\(tag)", .message, channel) }
            topology.subscribers = (0..<options.subscribers).map {
                (BenchClient(userId: "s\($0)-\(tag)", run: context), Topology.subscribing(to: channel))
            }
            topology.receiversPerPublish = options.subscribers
        case .manyToMany:
            for index in 0..<options.publishers {
                let channel = "m2m\(index)-\(tag)"
                topology.publishers.append(publisher("p\(index)-\(tag)", .message, channel))
                for subscriber in 0..<options.subscribers {
                    topology.subscribers.append(
                        (BenchClient(userId: "s\(index).\(subscriber)-\(tag)", run: context), Topology.subscribing(to: channel)))
                }
            }
            topology.receiversPerPublish = options.subscribers
        case .pointToPoint:
            for pair in 0..<options.publishers {
                let a = "a\(pair)-\(tag)", b = "b\(pair)-\(tag)"
                topology.publishers.append(publisher(a, .user, b))
                topology.publishers.append(publisher(b, .user, a))
            }
            topology.receiversPerPublish = 1
        case .topicFanout: topology = topicFanout(context)
        case .storageWrite: topology = storageWrites(context)
        case .storageRead: topology = storageReads(context)
        case .storageFanout: topology = storageFanout(context)
        case .presence, .lock, .decode: break
        }
        return topology
    }

    // MARK: Traffic scenarios

    private func traffic(_ context: RunContext, into line: inout JSONLine) async throws {
        let topology = topology(context)
        let setupStart = MonotonicClock.now()
        let options = options
        let subscribed = await forEach(Array(topology.subscribers.enumerated())) { index, entry in
            try await entry.client.connectAndLogIn(url: options.url(of: index, offset: 0))
            try await entry.setUp?(entry.client)
        }
        let publisherSetUp = topology.publisherSetUp
        let connected = await forEach(Array(topology.publishers.enumerated())) { index, publisher in
            try await publisher.connectAndLogIn(url: options.url(of: index, offset: 1))
            try await publisherSetUp?(publisher)
        }
        let failures = subscribed.failed + connected.failed
        guard failures == 0 else {
            throw BenchClient.Failure(
                description: "\(failures) connections failed to set up: \(subscribed.firstError ?? connected.firstError ?? "")")
        }
        let setupSeconds = Double(MonotonicClock.now() - setupStart) / 1e9
        let publishers = topology.publishers.compactMap(\.publisher)

        let pacer = options.rate > 0 ? Pacer(publishers: publishers, rate: options.rate, maxInFlight: 100_000) : nil
        let churn = options.scenario == .churn ? Churn(rate: options.churnRate, url: options.url, tag: tag, context: context) : nil
        for publisher in publishers { publisher.start() }
        pacer?.start()
        churn?.start()

        let window = try await measureWindow(context, deliveries: { context.deliveries }) {
            (accepted: publishers.reduce(0) { $0 + $1.accepted }, deliveries: context.deliveries, churn: churn?.completed ?? 0)
        }
        let (acceptedBefore, deliveriesBefore, churnBefore) = window.before
        let (acceptedAfter, deliveriesAfter, churnAfter) = window.after

        pacer?.stop()
        for publisher in publishers { publisher.stop() }
        let churnResult = await churn?.stop()

        // Drain: every publish answered, then every accepted publish delivered.
        let drainDeadline = MonotonicClock.now() + UInt64(options.drain * 1e9)
        var expected = 0
        while true {
            expected = publishers.reduce(0) { $0 + $1.accepted } * topology.receiversPerPublish
            let answered = publishers.allSatisfy { $0.inFlight == 0 }
            if (answered && context.deliveries >= expected) || MonotonicClock.now() > drainDeadline { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        let received = context.deliveries
        let serverEnd = usage.snapshot().server
        let verification = await topology.verify?() ?? Topology.Verification()
        let wrong = publishers.reduce(0) { $0 + $1.wrong }
        let interval = window.interval
        let histogram = context.histogram

        line.add("connections", topology.subscribers.count + topology.publishers.count)
        line.add("publishers", publishers.count)
        line.add("receivers_per_publish", topology.receiversPerPublish)
        line.add("payload_bytes", options.payload)
        line.add("rate_target", options.rate)
        if options.rate == 0 { line.add("window", options.window) }
        line.add("duration_s", interval.seconds)
        line.add("publishes_per_s", Double(acceptedAfter - acceptedBefore) / interval.seconds, digits: 0)
        line.add("deliveries_per_s", Double(deliveriesAfter - deliveriesBefore) / interval.seconds, digits: 0)
        line.add("latency_p50_ms", Double(histogram.value(atQuantile: 0.5)) / 1e6)
        line.add("latency_p99_ms", Double(histogram.value(atQuantile: 0.99)) / 1e6)
        line.add("latency_p999_ms", Double(histogram.value(atQuantile: 0.999)) / 1e6)
        line.add("latency_max_ms", Double(histogram.max) / 1e6)
        line.add("latency_samples", Int(histogram.count))
        line.add("published", publishers.reduce(0) { $0 + $1.accepted })
        line.add("refused", publishers.reduce(0) { $0 + $1.refused })
        line.add("unanswered", publishers.reduce(0) { $0 + $1.inFlight })
        expected -= verification.notDue
        line.add("expected", expected)
        line.add("received", received)
        line.add("lost", expected - received + wrong + verification.lost)
        if options.scenario.answersChecked { line.add("wrong", wrong) }
        line.append(verification.fields)
        addAnswerLatencies(publishers.compactMap(\.answerLatencies), into: &line)
        if let pacer { line.add("behind_schedule", pacer.skipped) }
        if let churnResult {
            line.add("churn_rate_target", options.churnRate)
            line.add("churn_logins_per_s", Double(churnAfter - churnBefore) / interval.seconds, digits: 1)
            line.add("churn_failures", churnResult.failed)
            if let error = churnResult.firstError { line.add("churn_first_error", error) }
        }
        line.add("setup_s", setupSeconds)
        addCPU(interval, serverRSS: serverEnd?.residentBytes, into: &line)
        line.add("server_cpu_ns_per_delivery", interval.serverCPU.map { $0 * 1e9 / Double(max(1, deliveriesAfter - deliveriesBefore)) }, digits: 0)
        line.add("server_cpu_ns_per_delivery_fastest_second", window.secondsNsPerDelivery.min(), digits: 0)

        _ = await forEach(topology.subscribers.map(\.client) + topology.publishers) { try await $0.logOut() }
    }

    // MARK: Idle

    private func idle(_ context: RunContext, fdLimit: Int, into line: inout JSONLine) async throws {
        let before = usage.snapshot()
        let clients = (0..<options.connections).map { BenchClient(userId: "i\($0)-\(tag)", run: context) }
        let setupStart = MonotonicClock.now()
        let stage = options.idleStage
        let result = await forEach(clients) { client in
            try await client.connect(url: options.url)
            if stage == "connect" { return }
            try await client.logIn()
            if stage == "login" { return }
            try await client.subscribe("idle\(client.userId)")
        }
        let setupSeconds = Double(MonotonicClock.now() - setupStart) / 1e9
        try await Task.sleep(for: .seconds(2))
        let after = usage.snapshot()
        let connected = options.connections - result.failed
        line.add("idle_stage", stage)
        line.add("connections_wanted", options.connections)
        line.add("connections", connected)
        line.add("failed", result.failed)
        if let error = result.firstError { line.add("first_error", error) }
        line.add("fd_limit", fdLimit)
        line.add("setup_s", setupSeconds)
        line.add("logins_per_s", Double(connected) / setupSeconds, digits: 0)
        if let rssBefore = before.server?.residentBytes, let rssAfter = after.server?.residentBytes {
            line.add("server_rss_before_mb", Double(rssBefore) / 1_048_576, digits: 1)
            line.add("server_rss_mb", Double(rssAfter) / 1_048_576, digits: 1)
            line.add("server_rss_per_connection_bytes", connected > 0 ? (rssAfter - rssBefore) / connected : 0)
        }
        if let cpuBefore = before.server?.cpuSeconds, let cpuAfter = after.server?.cpuSeconds {
            line.add("server_cpu_s", cpuAfter - cpuBefore)
        }
        line.add("lost", 0)
        if options.idleHold > 0 {
            FileHandle.standardError.write(Data("holding \(connected) connections for \(options.idleHold) s\n".utf8))
            try await Task.sleep(for: .seconds(options.idleHold))
        }
        if stage == "connect" {
            for client in clients { client.close() }
        } else {
            _ = await forEach(clients) { try await $0.logOut() }
        }
    }

    // MARK: Helpers

    func addCPU(_ interval: ResourceUsage.Interval, serverRSS: Int?, into line: inout JSONLine) {
        line.add("server_cpu_s", interval.serverCPU)
        line.add("server_cpu_cores", interval.serverCPU.map { $0 / interval.seconds })
        line.add("server_rss_mb", serverRSS.map { Double($0) / 1_048_576 }, digits: 1)
        let benchCores = interval.benchCPU / interval.seconds
        line.add("bench_cpu_cores", benchCores)
        line.add("bench_busiest_thread", interval.busiestThread)
        let saturated = interval.busiestThread > 0.9 || benchCores > 0.9 * Double(options.threads)
        line.add("bench_cpu_saturated", saturated)
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        line.add("machine_cpu_saturated", benchCores + (interval.serverCPU ?? 0) / interval.seconds > 0.9 * cores)
    }

    /// One measured window: the resource snapshots at its ends, and what `read` counted there.
    struct Window<Count> {
        var start: ResourceUsage.Snapshot
        var end: ResourceUsage.Snapshot
        var before: Count
        var after: Count
        /// The server's CPU per delivery in each whole second of the window, in ns (when the
        /// window counted deliveries and the server's CPU).
        var secondsNsPerDelivery: [Double] = []

        var interval: ResourceUsage.Interval { ResourceUsage.Interval(from: start, to: end) }
    }

    /// Waits out the warm-up, then measures for `--duration` seconds, recording latencies
    /// meanwhile; `read` counts what the window is about at both ends. With `deliveries`, also
    /// measures the server's CPU per delivery in each whole second: on a shared machine whose
    /// speed changes from moment to moment, the fastest second is the steadiest figure.
    func measureWindow<Count>(
        _ context: RunContext, deliveries: (() -> Int)? = nil, reading read: () -> Count
    ) async throws -> Window<Count> {
        try await Task.sleep(for: .seconds(options.warmup))
        let before = read()
        let start = usage.snapshot()
        context.measuring = true
        var seconds: [Double] = []
        if let deliveries {
            var mark = (snapshot: start, deliveries: deliveries())
            for _ in 0..<Int(options.duration) {
                try await Task.sleep(for: .seconds(1))
                let next = (snapshot: usage.snapshot(), deliveries: deliveries())
                let cpu = ResourceUsage.Interval(from: mark.snapshot, to: next.snapshot).serverCPU
                if let cpu, next.deliveries > mark.deliveries { seconds.append(cpu * 1e9 / Double(next.deliveries - mark.deliveries)) }
                mark = next
            }
            let rest = options.duration - Double(Int(options.duration))
            if rest > 0 { try await Task.sleep(for: .seconds(rest)) }
        } else {
            try await Task.sleep(for: .seconds(options.duration))
        }
        context.measuring = false
        let end = usage.snapshot()
        return Window(start: start, end: end, before: before, after: read(), secondsNsPerDelivery: seconds)
    }

    /// The request-to-answer latencies of the publishers that record them, merged.
    private func addAnswerLatencies(_ histograms: [LatencyHistogram], into line: inout JSONLine) {
        guard !histograms.isEmpty else { return }
        let merged = histograms.reduce(into: LatencyHistogram()) { $0.merge($1) }
        line.add("answer_p50_ms", Double(merged.value(atQuantile: 0.5)) / 1e6)
        line.add("answer_p99_ms", Double(merged.value(atQuantile: 0.99)) / 1e6)
        line.add("answer_max_ms", Double(merged.max) / 1e6)
    }

    /// Runs `body` for every element, `connectConcurrency` at a time; counts failures.
    func forEach<T: Sendable>(
        _ items: [T], _ body: @escaping @Sendable (T) async throws -> Void
    ) async -> (failed: Int, firstError: String?) {
        var failed = 0
        var firstError: String?
        await withTaskGroup(of: String?.self) { group in
            var iterator = items.makeIterator()
            var running = 0
            func record(_ error: String?) {
                guard let error else { return }
                failed += 1
                if firstError == nil { firstError = error }
            }
            while true {
                while running < options.connectConcurrency, let item = iterator.next() {
                    group.addTask {
                        do {
                            try await body(item)
                            return nil
                        } catch {
                            return "\(error)"
                        }
                    }
                    running += 1
                }
                guard let result = await group.next() else { break }
                running -= 1
                record(result)
            }
        }
        return (failed, firstError)
    }
}
