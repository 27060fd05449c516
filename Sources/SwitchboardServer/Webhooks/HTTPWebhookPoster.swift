import Synchronization
import SwitchboardCryptography
import SwitchboardTransport
import SwitchboardWebhooks

/// Posts webhook deliveries with the transport's `HTTPClient` on an event loop of its own (one
/// thread, made at the first post), so a slow or silent receiver never holds a client
/// connection's loop. `https://` receivers are checked against the system's trusted roots.
final class HTTPWebhookPoster: WebhookPoster {
    private enum Loop {
        case none
        case running(HTTPClient, EventLoopGroup)
        case failed(String)
        case stopped
    }
    private let loop = Mutex(Loop.none)

    func post(_ request: WebhookRequest) async -> WebhookPostOutcome {
        guard let url = HTTPURL(request.url) else { return .failed("not an http:// or https:// URL") }
        let client: HTTPClient
        switch started() {
        case .success(let started): client = started
        case .failure(let reason): return .failed(reason.message)
        }
        let result = await client.send(
            "POST", to: url, headers: request.headers.map { HTTPHeaderField($0.name, $0.value) }, body: request.body,
            timeout: request.timeout)
        switch result {
        case .success(let head): return .answered(status: head.status)
        case .failure(let error): return .failed("\(error)")
        }
    }

    func shutdown() async {
        let group = loop.withLock { loop -> EventLoopGroup? in
            defer { loop = .stopped }
            if case .running(_, let group) = loop { return group }
            return nil
        }
        group?.shutdown()
    }

    private struct NotPosting: Error {
        let message: String
    }

    /// The client, made with its loop at the first call.
    private func started() -> Result<HTTPClient, NotPosting> {
        loop.withLock { loop in
            switch loop {
            case .running(let client, _): return .success(client)
            case .failed(let reason): return .failure(NotPosting(message: reason))
            case .stopped: return .failure(NotPosting(message: "the server is stopping"))
            case .none:
                do {
                    let group = try EventLoopGroup(threads: 1)
                    let client = HTTPClient(group: group, tls: try? TLSContext.client())
                    loop = .running(client, group)
                    return .success(client)
                } catch {
                    loop = .failed("cannot start the webhook loop: \(error)")
                    return .failure(NotPosting(message: "cannot start the webhook loop: \(error)"))
                }
            }
        }
    }
}
