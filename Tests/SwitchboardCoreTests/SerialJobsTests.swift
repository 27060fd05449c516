import Synchronization
import Testing
import SwitchboardCore

@Suite(.timeLimit(.minutes(2))) struct SerialJobsTests {
    @Test func jobsRunOneAtATimeInQueueOrderAcrossBursts() async {
        let jobs = SerialJobs()
        let log = Mutex<[Int]>([])
        let running = Mutex(0)
        for burst in 0..<5 {
            for index in 0..<50 {
                let number = burst * 50 + index
                jobs.enqueue {
                    let overlapping = running.withLock { $0 += 1; return $0 } > 1
                    #expect(!overlapping, "two jobs ran at once")
                    await Task.yield()
                    log.withLock { $0.append(number) }
                    running.withLock { $0 -= 1 }
                }
            }
            // Let the queue run dry between bursts, so a new drain starts each time.
            for _ in 0..<200 where log.withLock({ $0.count }) < (burst + 1) * 50 { try? await Task.sleep(for: .milliseconds(1)) }
        }
        #expect(log.withLock { $0 } == Array(0..<250))
    }

    /// Idle only once every job queued has finished: not while one waits or runs.
    @Test func theQueueIsIdleOnlyWhenEveryJobHasFinished() async {
        let jobs = SerialJobs()
        #expect(jobs.isIdle)
        let (gate, open) = AsyncStream<Void>.makeStream()
        let started = Mutex(false)
        jobs.enqueue {
            started.withLock { $0 = true }
            for await _ in gate {}
        }
        jobs.enqueue {}
        #expect(!jobs.isIdle)
        for _ in 0..<500 where !started.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(!jobs.isIdle)
        open.finish()
        for _ in 0..<500 where !jobs.isIdle { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(jobs.isIdle)
    }

    @Test func aFinishedQueueRunsWhatItHadAndRefusesMore() async {
        let jobs = SerialJobs()
        let ran = Mutex(0)
        for _ in 0..<10 { jobs.enqueue { ran.withLock { $0 += 1 } } }
        jobs.finish()
        #expect(!jobs.enqueue { ran.withLock { $0 += 100 } })
        for _ in 0..<500 where ran.withLock({ $0 }) < 10 { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(ran.withLock { $0 } == 10)
    }
}

@Suite(.timeLimit(.minutes(2))) struct OneAtATimeTests {
    actor Recorder {
        var log: [String] = []
        let turns = OneAtATime()

        func operation(_ name: String) async throws(RtmError) {
            try await turns.run { () async throws(RtmError) in
                log.append("\(name) begins")
                await Task.yield()
                try? await Task.sleep(for: .milliseconds(2))  // a store call that suspends
                log.append("\(name) ends")
            }
        }
    }

    @Test func operationsThatSuspendAreNeverInterleaved() async throws {
        let recorder = Recorder()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<8 { group.addTask { try? await recorder.operation("op\(index)") } }
        }
        let log = await recorder.log
        #expect(log.count == 16)
        for pair in stride(from: 0, to: log.count, by: 2) {
            #expect(log[pair].hasSuffix("begins") && log[pair + 1].hasSuffix("ends"))
            #expect(log[pair].dropLast(7) == log[pair + 1].dropLast(5))
        }
    }
}
