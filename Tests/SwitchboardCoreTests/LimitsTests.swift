import Testing
import SwitchboardCore

/// Every group of `Limits` holds the reference's figures (`LIMITS.md`), and the helpers clamp and
/// lift as they say.
@Suite(.timeLimit(.minutes(1))) struct LimitsTests {
    let limits = Limits()

    @Test func eachFeaturesGroupHasTheReferenceFigures() {
        #expect(limits.messages.payloadMaxBytes == 32 * 1024)
        #expect(limits.messages.perChannelPerSecond == 60)
        #expect(limits.messages.usersPerChannel == 50_000)
        #expect(limits.sessions.concurrentUsers == 50_000)
        #expect(limits.sessions.heartbeatIntervalRange == 5...1800 && limits.sessions.defaultHeartbeatInterval == 5)
        #expect(limits.sessions.presenceTimeoutRange == 5...300 && limits.sessions.defaultPresenceTimeout == 300)
        #expect(limits.streams.joinedChannelsPerClient == 10 && limits.streams.usersPerChannel == 128)
        #expect(limits.streams.joinedTopicsPerChannel == 8 && limits.streams.subscribedTopicsPerChannel == 50)
        #expect(limits.streams.publishersPerTopicSubscription == 64)
        #expect(limits.streams.topicNameMaxLength == 16 && limits.streams.topicMetaMaxBytes == 256)
        #expect(limits.streams.topicPayloadMaxBytes == 1024 && limits.streams.topicMessagesPerSecond == 200)
        #expect(limits.presence.statesPerUser == 32 && limits.presence.statesCachedBeforeJoin == 100)
        #expect(limits.presence.intervalThreshold == 50 && limits.presence.interval == .seconds(30))
        #expect(limits.presence.intervalDebounce == .seconds(2))
        #expect(limits.storage.keyMaxLength == 32 && limits.storage.valueMaxBytes == 16 * 1024)
        #expect(limits.storage.setMaxBytes == 16 * 1024 && limits.storage.callsPerSecondPerClient == 10)
        #expect(limits.locks.perChannel == 32 && limits.locks.ttlRange == 10...300 && limits.locks.defaultTTL == 10)
        #expect(limits.locks.acquiresPerSecondPerClient == 10)
        #expect(limits.names.userIdMaxBytes == 64)
    }

    @Test func intervalModeSettingsAreClampedIntoTheirRanges() {
        var presence = limits.presence
        presence.intervalThreshold = 2
        presence.interval = .seconds(600)
        #expect(presence.clampedIntervalThreshold == 8)
        #expect(presence.clampedInterval == .seconds(300))
        presence.intervalThreshold = 500
        presence.interval = .seconds(1)
        #expect(presence.clampedIntervalThreshold == 128)
        #expect(presence.clampedInterval == .seconds(5))
    }

    @Test func withoutRateLimitsLiftsEveryRateAndNothingElse() {
        let lifted = Limits.withoutRateLimits
        #expect(lifted.sessions.otherCallsPerSecondPerClient == nil)
        #expect(lifted.messages.publishesPerSecondPerClient == nil && lifted.messages.perChannelPerSecond == nil)
        #expect(lifted.streams.topicMessagesPerSecond == nil)
        #expect(lifted.storage.callsPerSecondPerClient == nil)
        #expect(lifted.locks.acquiresPerSecondPerClient == nil)
        var relimited = lifted
        relimited.sessions.otherCallsPerSecondPerClient = limits.sessions.otherCallsPerSecondPerClient
        relimited.messages.publishesPerSecondPerClient = limits.messages.publishesPerSecondPerClient
        relimited.messages.perChannelPerSecond = limits.messages.perChannelPerSecond
        relimited.streams.topicMessagesPerSecond = limits.streams.topicMessagesPerSecond
        relimited.storage.callsPerSecondPerClient = limits.storage.callsPerSecondPerClient
        relimited.locks.acquiresPerSecondPerClient = limits.locks.acquiresPerSecondPerClient
        #expect(relimited == limits)
    }
}
