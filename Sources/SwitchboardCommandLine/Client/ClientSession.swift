import Foundation
import SwitchboardClient
import SwitchboardServer
import Synchronization

/// A logged-in SDK client for one run of `switchboard client`, and where it prints.
final class ClientSession: Sendable {
    let kit: RtmClientKit
    let settings: ClientSettings
    let output: ClientOutput
    /// The events, made before the login so that nothing is missed.
    let events: AsyncStream<RtmEvent>

    var url: String { settings.url }
    var appId: String { settings.appId }
    var user: String { settings.user }

    private init(kit: RtmClientKit, settings: ClientSettings, output: ClientOutput) {
        self.kit = kit
        self.settings = settings
        self.output = output
        events = kit.events
    }

    /// Connects and logs in, within the settings' timeout.
    static func open(_ settings: ClientSettings, output: ClientOutput) async throws -> ClientSession {
        let config = RtmClientConfig(appId: settings.appId, userId: settings.user)
        let privateConfig = RtmPrivateConfig()
        privateConfig.accessPointHosts = [settings.url]
        privateConfig.tlsCAFile = settings.caFile
        config.privateConfig = privateConfig
        let kit: RtmClientKit
        do {
            kit = try RtmClientKit(config, delegate: nil)
        } catch {
            throw ClientFailure("cannot make a client: \(error)")
        }
        let session = ClientSession(kit: kit, settings: settings, output: output)
        let token = settings.token
        // The first of the login's answer and the timeout; the login is not waited for after the
        // timeout (the SDK may go on trying): closing the client ends it.
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<LoginOutcome, Never>) in
            let first = FirstOutcome(continuation)
            Task { first.resume(await kit.login(token).1.map(LoginOutcome.refused) ?? .loggedIn) }
            Task {
                try? await Task.sleep(for: settings.timeout)
                first.resume(.timedOut)
            }
        }
        switch outcome {
        case .loggedIn:
            return session
        case .refused(let error):
            session.close()
            throw ClientFailure(error)
        case .timedOut:
            session.close()
            throw ClientFailure("no login answer from \(settings.url) within \(settings.timeout)")
        }
    }

    private enum LoginOutcome: Sendable {
        case loggedIn
        case refused(RtmErrorInfo)
        case timedOut
    }

    /// Resumes a continuation with the first outcome handed to it; later ones are dropped.
    private final class FirstOutcome: Sendable {
        private let continuation: Mutex<CheckedContinuation<LoginOutcome, Never>?>
        init(_ continuation: CheckedContinuation<LoginOutcome, Never>) { self.continuation = Mutex(continuation) }
        func resume(_ outcome: LoginOutcome) { continuation.withLock { $0.take() }?.resume(returning: outcome) }
    }

    /// Prints a record.
    func emit(_ record: ClientRecord) { output.record(record.line(json: settings.json)) }

    /// Prints a note (not a record: what the command is doing).
    func note(_ text: String) { output.note(text) }

    /// Runs `call` with the run's request id, and returns its response or throws its error.
    func call<Response>(_ call: @Sendable () async -> (Response?, RtmErrorInfo?)) async throws -> Response {
        let (response, error) = await RtmRequestTrace.$current.withValue(settings.requestId) { await call() }
        if let error { throw ClientFailure(error) }
        guard let response else { throw ClientFailure("no answer") }
        return response
    }

    /// Logs out (the SDK's destroy says goodbye to the server) and lets the client go.
    func close() { _ = kit.destroy() }
}
