/// The command line of `switchboard-bench`.
struct BenchOptions {
    enum Scenario: String, CaseIterable {
        case fanout, manyToMany = "many-to-many", pointToPoint = "point-to-point", idle, churn
        case topicFanout = "topic-fanout", presence
        case storageWrite = "storage-write", storageRead = "storage-read", storageFanout = "storage-fanout"
        case lock
        /// No server: the server's decoding of a publish frame, timed in memory (`FrameDecoding`).
        case decode

        /// Whether the scenario checks what each answer says (not only that it is `ok`).
        var answersChecked: Bool { self == .storageRead }
    }

    /// The servers; with several (the nodes of a cluster), subscribers go to them in turn, and each
    /// publisher to the node after its partner's (so a point-to-point pair is never on one node).
    var urls = ["ws://127.0.0.1:9100"]
    private var urlsGiven = false
    /// The first server: where every client goes when there is one.
    var url: String { urls[0] }

    /// The server of the subscriber (`offset` 0) or publisher (`offset` 1) numbered `index`.
    func url(of index: Int, offset: Int) -> String { urls[(index + offset) % urls.count] }
    var scenario = Scenario.fanout
    /// Fan-out and churn: subscribers of the one channel; many-to-many: subscribers per channel.
    var subscribers = 100
    /// Publishers (many-to-many: channels; point-to-point: pairs; storage: writers or readers;
    /// presence: `whoNow` pagers; lock: contenders).
    var publishers = 1
    /// Message body size in bytes (at least 8, the timestamp).
    var payload = 100
    /// Publishes per second over all publishers; 0 publishes as fast as the window allows.
    var rate = 0
    /// Unanswered publishes each publisher may have in flight.
    var window = 64
    /// Seconds measured, after the warm-up.
    var duration = 10.0
    /// Seconds of traffic before measuring.
    var warmup = 1.0
    /// Longest wait, in seconds, for deliveries still in flight after publishing stops.
    var drain = 5.0
    /// Idle: connections to open; presence: users joining the channel.
    var connections = 10_000
    /// Presence: the server's interval-mode period, in seconds (how long an interval event may take).
    var presenceInterval = 30.0
    /// Idle: how far each connection goes: `connect` (WebSocket open), `login`, or `subscribe`.
    var idleStage = "subscribe"
    /// Idle: seconds the connections stay open after the measurement, before they log out (a heap
    /// profile of the server is taken meanwhile: `tools/heap-profile.sh`).
    var idleHold = 0.0
    /// Churn: logins (each followed by a logout) per second.
    var churnRate = 100
    /// The server processes' ids (every node of a cluster), for their CPU time and memory.
    var serverPids: [Int] = []
    /// The local address every connection is made from; nil: the kernel's choice.
    var sourceAddress: String?
    /// Event-loop threads of the load generator.
    var threads = 2
    /// Connection attempts in flight at once while setting up.
    var connectConcurrency = 256
    /// A label copied into the output line.
    var label = ""

    static let usage = """
        switchboard-bench [options]   prints one JSON line per run
          --url URL                 server (default ws://127.0.0.1:9100); repeat for the nodes of a cluster
          --scenario NAME           fanout | many-to-many | point-to-point | idle | churn | topic-fanout |
                                    presence | storage-write | storage-read | storage-fanout | lock |
                                    decode (no server: times decoding a publish of --payload bytes
                                    for --duration seconds)
          --subscribers N           fanout/churn/topic-fanout/storage-fanout: subscribers;
                                    many-to-many: per channel (100)
          --publishers N            publishers; many-to-many: channels; point-to-point: pairs;
                                    storage-write/-read: writers/readers; presence: whoNow pagers;
                                    lock: contenders (1)
          --payload BYTES           message size, at least 8; storage: value size (100)
          --rate N                  publishes per second over all publishers; 0 = as fast as possible (0)
          --window N                unanswered publishes per publisher (64)
          --duration S              measured seconds (10)   --warmup S (1)   --drain S (5)
          --connections N           idle: logged-in connections; presence: users joining (10000)
          --presence-interval S     presence: the server's interval-mode period (30)
          --idle-stage STAGE        idle: connect | login | subscribe, how far each goes (subscribe)
          --idle-hold S             idle: keep the connections open S seconds after the measurement,
                                    saying so on stderr first (0)
          --churn-rate N            churn: logins and logouts per second (100)
          --server-pid PID          read the server's CPU time and RSS from /proc; repeat for every node
          --source-address ADDR     connect from this local address (e.g. 127.0.0.2)
          --threads N               load-generator event loops (2)
          --connect-concurrency N   connection attempts at once (256)
          --label TEXT              copied into the output
        The server must run with --no-rate-limits.
        """

    init(_ arguments: [String]) throws {
        var index = 0
        func value(_ name: String) throws -> String {
            index += 1
            guard index < arguments.count else { throw UsageError("\(name) needs a value") }
            return arguments[index]
        }
        func number<T: LosslessStringConvertible>(_ name: String) throws -> T {
            let text = try value(name)
            guard let number = T(text) else { throw UsageError("\(name) takes a number, not '\(text)'") }
            return number
        }
        while index < arguments.count {
            let name = arguments[index]
            switch name {
            case "--url":
                let given = try value(name)
                urls = urlsGiven ? urls + [given] : [given]
                urlsGiven = true
            case "--scenario":
                let text = try value(name)
                guard let chosen = Scenario(rawValue: text) else { throw UsageError("unknown scenario '\(text)'") }
                scenario = chosen
            case "--subscribers": subscribers = try number(name)
            case "--publishers": publishers = try number(name)
            case "--payload": payload = try number(name)
            case "--rate": rate = try number(name)
            case "--window": window = try number(name)
            case "--duration": duration = try number(name)
            case "--warmup": warmup = try number(name)
            case "--drain": drain = try number(name)
            case "--connections": connections = try number(name)
            case "--presence-interval": presenceInterval = try number(name)
            case "--idle-stage":
                idleStage = try value(name)
                guard ["connect", "login", "subscribe"].contains(idleStage) else {
                    throw UsageError("--idle-stage takes connect, login or subscribe")
                }
            case "--idle-hold": idleHold = try number(name)
            case "--churn-rate": churnRate = try number(name)
            case "--server-pid": serverPids.append(try number(name))
            case "--source-address": sourceAddress = try value(name)
            case "--threads": threads = try number(name)
            case "--connect-concurrency": connectConcurrency = try number(name)
            case "--label": label = try value(name)
            default: throw UsageError("unknown option '\(name)'\n\(Self.usage)")
            }
            index += 1
        }
        guard payload >= 8 else { throw UsageError("--payload must be at least 8 (the timestamp)") }
        guard publishers >= 1, subscribers >= 0, window >= 1, threads >= 1, rate >= 0 else {
            throw UsageError("--publishers, --window and --threads must be at least 1")
        }
    }
}

/// A mistake on the command line.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
