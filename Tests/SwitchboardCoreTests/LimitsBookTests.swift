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
}
