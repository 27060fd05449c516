import SwitchboardTransport

extension AdminRouter {
    /// Adds the health and metrics endpoints: `GET /health/live` (200 while the process serves),
    /// `GET /health/ready` (200 when every readiness check passes, else 503 naming what is not
    /// ready) and `GET /metrics` (Prometheus text format 0.0.4, written by `scrape`).
    func addHealthAndMetrics(readiness: Readiness, scrape: @escaping @Sendable () async -> String) {
        add("GET", "/health/live") { _ in .json(200, "{\"status\":\"live\"}") }
        add("GET", "/health/ready") { _ in
            let report = await readiness.evaluate()
            return .json(report.isReady ? 200 : 503, report.json)
        }
        add("GET", "/metrics") { _ in
            HTTPResponse(
                status: 200, headers: [HTTPHeaderField("Content-Type", PrometheusText.contentType)], body: Array(await scrape().utf8))
        }
    }
}
