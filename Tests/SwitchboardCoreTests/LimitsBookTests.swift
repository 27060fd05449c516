import Testing
import SwitchboardCore
import SwitchboardTestKit

/// The limits book: an app without its own limits gets the server's, the apps served are those
/// named, and a replaced edition is what every read after it sees, while what was read before
/// stays as it was.
@Suite(.timeLimit(.minutes(1))) struct LimitsBookTests {
    static func edition(payload: Int, alphaPayload: Int) -> LimitsBook.Edition {
        var server = Limits()
        server.messages.payloadMaxBytes = payload
        var alpha = server
        alpha.messages.payloadMaxBytes = alphaPayload
        return LimitsBook.Edition(server: server, apps: ["alpha": alpha], served: ["alpha", "beta"])
    }

    @Test func anAppWithoutItsOwnLimitsGetsTheServersAndOnlyTheAppsNamedAreServed() {
        let book = LimitsBook(Self.edition(payload: 1000, alphaPayload: 10))
        #expect(book.limits(for: "alpha").messages.payloadMaxBytes == 10)
        #expect(book.limits(for: "beta").messages.payloadMaxBytes == 1000)
        #expect(book.server.messages.payloadMaxBytes == 1000)
        #expect(book.reading(for: "alpha") { $0.messages.payloadMaxBytes } == 10)
        #expect(book.reading(for: "beta") { $0.messages.payloadMaxBytes } == 1000)
        #expect(book.serves("alpha") && book.serves("beta") && !book.serves("gamma"))
        #expect(LimitsBook(limits: Limits()).serves("any"))
    }

    @Test func aReplacedEditionIsReadFromThenOnAndWhatWasReadBeforeStays() {
        let book = LimitsBook(Self.edition(payload: 1000, alphaPayload: 10))
        let before = book.limits(for: "alpha")
        book.replace(with: Self.edition(payload: 2000, alphaPayload: 20))
        #expect(before.messages.payloadMaxBytes == 10)
        #expect(book.limits(for: "alpha").messages.payloadMaxBytes == 20)
        #expect(book.limits(for: "beta").messages.payloadMaxBytes == 2000)
        var server = Limits()
        server.messages.payloadMaxBytes = 3000
        book.replaceServerLimits(with: server)
        #expect(book.limits(for: "beta").messages.payloadMaxBytes == 3000)
        #expect(book.limits(for: "alpha").messages.payloadMaxBytes == 20)
        #expect(!book.serves("gamma"))
        // A context reads the book it was given.
        let context = ModuleContext(bus: EventBus(), clock: SystemClock(), limitsBook: book, outbox: RecordingOutbox())
        #expect(context.limits(for: "alpha").messages.payloadMaxBytes == 20 && context.limits.messages.payloadMaxBytes == 3000)
    }

    @Test func onlyAChangeCountsAsAReplacementAndWithLimitsReadsTheAppsOwnElseTheServers() {
        let book = LimitsBook(Self.edition(payload: 1000, alphaPayload: 10))
        #expect(book.replacementCount == 0)
        #expect(book.withLimits(for: "alpha") { $0.messages.payloadMaxBytes } == 10)
        #expect(book.withLimits(for: "beta") { $0.messages.payloadMaxBytes } == 1000)
        // The same edition again, the same server limits again: nothing to read anew.
        book.replace(with: Self.edition(payload: 1000, alphaPayload: 10))
        book.replaceServerLimits(with: book.server)
        #expect(book.replacementCount == 0)
        book.replace(with: Self.edition(payload: 1000, alphaPayload: 11))
        #expect(book.replacementCount == 1)
        #expect(book.withLimits(for: "alpha") { $0.messages.payloadMaxBytes } == 11)
        var server = book.server
        server.messages.payloadMaxBytes = 1001
        book.replaceServerLimits(with: server)
        #expect(book.replacementCount == 2)
        #expect(book.withLimits(for: "beta") { $0.messages.payloadMaxBytes } == 1001)
        #expect(book.withLimits(for: "alpha") { $0.messages.payloadMaxBytes } == 11)
        // Back and forth between two editions (the second one kept already): each swap is in force.
        let first = Self.edition(payload: 1000, alphaPayload: 10), second = Self.edition(payload: 3000, alphaPayload: 30)
        for round in 0..<4 {
            book.replace(with: round.isMultiple(of: 2) ? first : second)
            #expect(book.withLimits(for: "alpha") { $0.messages.payloadMaxBytes } == (round.isMultiple(of: 2) ? 10 : 30))
            #expect(book.edition == (round.isMultiple(of: 2) ? first : second))
        }
        #expect(book.replacementCount == 6)
    }

    @Test func readersOnOtherThreadsSeeOneWholeEditionOrTheNextWhileItIsReplaced() async {
        // Each edition's server and app payloads are n and n + 1; a reader must never see them mixed.
        @Sendable func edition(_ n: Int) -> LimitsBook.Edition {
            var server = Limits()
            server.messages.payloadMaxBytes = n
            server.messages.customTypeMaxLength = n
            var alpha = server
            alpha.messages.payloadMaxBytes = n + 1
            return LimitsBook.Edition(server: server, apps: ["alpha": alpha])
        }
        let book = LimitsBook(edition(0))
        // Threads of their own (`BlockingWork`): loops that never suspend would hold the executor's.
        let torn = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    (try? await BlockingWork.run {
                        var torn = 0, last = 0
                        for _ in 0..<20_000 {
                            let (payload, customType) = book.withLimits(for: "beta") {
                                ($0.messages.payloadMaxBytes, $0.messages.customTypeMaxLength)
                            }
                            let alpha = book.withLimits(for: "alpha") { $0.messages.payloadMaxBytes }
                            // Editions only move forward; one is whole.
                            if payload != customType || payload < last || alpha < payload + 1 { torn += 1 }
                            last = payload
                        }
                        return torn
                    }) ?? 1
                }
            }
            group.addTask {
                (try? await BlockingWork.run {
                    for n in 1...500 { book.replace(with: edition(n)) }
                    return 0
                }) ?? 1
            }
            return await group.reduce(0, +)
        }
        #expect(torn == 0)
        #expect(book.replacementCount == 500)
        #expect(book.withLimits(for: "alpha") { $0.messages.payloadMaxBytes } == 501)
    }
}
