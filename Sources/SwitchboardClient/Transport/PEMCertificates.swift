import Foundation

/// The certificates of a PEM file, for platforms that take them as DER (`SecCertificate`).
enum PEMCertificates {
    /// The DER bytes of every `CERTIFICATE` block in `pem`, in order; blocks that are not base64
    /// are skipped.
    static func der(from pem: Data) -> [Data] {
        guard let text = String(data: pem, encoding: .utf8) else { return [] }
        var certificates: [Data] = []
        var body: String?
        for line in text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line == "-----BEGIN CERTIFICATE-----" {
                body = ""
            } else if line == "-----END CERTIFICATE-----" {
                if let body, let der = Data(base64Encoded: body) { certificates.append(der) }
                body = nil
            } else if body != nil {
                body! += line
            }
        }
        return certificates
    }
}
