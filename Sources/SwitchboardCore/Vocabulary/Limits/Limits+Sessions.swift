extension Limits {
    /// Sessions (`limits.sessions`): logins per app, heartbeats, the presence timeout, what is
    /// kept for a resume, and the per-client budget of calls no feature budgets on its own.
    public struct Sessions: Sendable, Hashable {
        /// Concurrent logged-in users per app.
        public var concurrentUsers = 50_000
        /// Allowed `heartbeatInterval`, in seconds; values outside are clamped.
        public var heartbeatIntervalRange: ClosedRange<Int> = 5...1800
        /// Default `heartbeatInterval`, in seconds.
        public var defaultHeartbeatInterval = 5
        /// Extra silence tolerated after a missed heartbeat before a client counts as lost, in seconds.
        public var heartbeatGrace = 10
        /// Allowed `presenceTimeout`, in seconds; values outside are clamped.
        public var presenceTimeoutRange: ClosedRange<Int> = 5...300
        /// Default `presenceTimeout`, in seconds.
        public var defaultPresenceTimeout = 300
        /// Other API calls (subscribe, unsubscribe …) one client may make per second; `nil` lifts it.
        public var otherCallsPerSecondPerClient: Int? = 20
        /// Messages kept for a disconnected session until it resumes.
        public var resumeBufferMaxMessages = 1_000
        /// Bytes of messages kept for a disconnected session until it resumes.
        public var resumeBufferMaxBytes = 1024 * 1024
        /// Bytes of messages kept for all disconnected sessions together, server-wide: past it the
        /// oldest are forgotten first (the session detached longest ago loses its oldest), and a
        /// resume reports them in `lostMessages`.
        public var resumeBufferTotalBytes = 256 * 1024 * 1024
        /// Recent messages kept for a connected session, to send again after a resume when its
        /// connection died before the server noticed.
        public var resumeReplayMaxMessages = 128
        /// Recent bytes kept for a connected session, for the same purpose.
        public var resumeReplayMaxBytes = 64 * 1024

        /// The reference's limits.
        public init() {}

        /// Clamps a requested heartbeat interval into the allowed range (0 means the default).
        public func clampedHeartbeatInterval(_ seconds: Int) -> Int {
            seconds == 0 ? defaultHeartbeatInterval : seconds.clamped(to: heartbeatIntervalRange)
        }

        /// Clamps a requested presence timeout into the allowed range (0 means the default).
        public func clampedPresenceTimeout(_ seconds: Int) -> Int {
            seconds == 0 ? defaultPresenceTimeout : seconds.clamped(to: presenceTimeoutRange)
        }
    }
}
