import SwitchboardTransport

/// The admin page: one HTML page (`GET /`), its style sheet and its script, served from the
/// binary. The page asks for an API key once per browser session and does everything through the
/// server API, sending the key in the `Authorization` header only.
///
/// Every answer forbids what the page does not need (`Content-Security-Policy`: no inline
/// script or style, no other origin, no framing) and content sniffing.
enum AdminPage {
    /// The page's files by path, with their content types.
    static let files: [(path: String, contentType: String, bytes: [UInt8])] = [
        ("/", "text/html; charset=utf-8", PackageResources.admin_html),
        ("/admin.css", "text/css; charset=utf-8", PackageResources.admin_css),
        ("/admin.js", "text/javascript; charset=utf-8", PackageResources.admin_js),
        ("/favicon.svg", "image/svg+xml", PackageResources.favicon_svg),
    ]

    /// What the page may load and run: its own script and style sheet, calls to its own origin.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The headers every answer of the page carries.
    static let securityHeaders = [
        HTTPHeaderField("Content-Security-Policy", contentSecurityPolicy),
        HTTPHeaderField("X-Content-Type-Options", "nosniff"),
        HTTPHeaderField("X-Frame-Options", "DENY"),
        HTTPHeaderField("Referrer-Policy", "no-referrer"),
    ]
}

extension AdminRouter {
    /// Adds the admin page's routes (`GET /`, `/admin.css`, `/admin.js`, `/favicon.svg`).
    func addAdminPage() {
        for file in AdminPage.files {
            let response = HTTPResponse(
                status: 200,
                headers: [HTTPHeaderField("Content-Type", file.contentType), HTTPHeaderField("Cache-Control", "no-cache")]
                    + AdminPage.securityHeaders,
                body: file.bytes)
            add("GET", file.path) { _ in response }
        }
    }
}
