import Foundation

/// A throwaway certificate authority and server certificates, made with the `openssl` command
/// line in a temporary directory, for TLS tests. Valid for two days; removed by `remove()`.
public struct TestCertificates: Sendable {
    /// The directory holding every file.
    public let directory: String
    /// The CA certificate (PEM) that signed both server certificates.
    public let caFile: String
    /// A server certificate for `localhost` and `127.0.0.1`.
    public let certificateFile: String
    /// The private key of `certificateFile`.
    public let keyFile: String
    /// A server certificate from the same CA for another host name only (`switchboard.invalid`).
    public let otherHostCertificateFile: String
    /// The private key of `otherHostCertificateFile`.
    public let otherHostKeyFile: String

    /// Makes the CA and the certificates (P-256 keys, three openssl runs, on a thread of their own so
    /// that no thread of the global executor is blocked while they run).
    public static func make() async throws -> TestCertificates {
        try await BlockingWork.run { try makeNow() }
    }

    private static func makeNow() throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("switchboard-tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        do {
            let certificates = TestCertificates(directory: directory)
            try certificates.generate()
            return certificates
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// Runs `body` with fresh certificates and removes them afterwards.
    public static func with<R>(_ body: (TestCertificates) async throws -> R) async throws -> R {
        let certificates = try await make()
        defer { certificates.remove() }
        return try await body(certificates)
    }

    private init(directory: String) {
        self.directory = directory
        caFile = directory + "/ca.pem"
        certificateFile = directory + "/server.pem"
        keyFile = directory + "/server.key"
        otherHostCertificateFile = directory + "/other.pem"
        otherHostKeyFile = directory + "/other.key"
    }

    /// Deletes the directory.
    public func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func generate() throws {
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try Self.openssl(
            ["req", "-x509"] + key + ["-keyout", directory + "/ca.key", "-out", caFile, "-days", "2",
            "-subj", "/CN=Switchboard Test CA"])
        try issue(name: "server", subjectAltName: "DNS:localhost,IP:127.0.0.1", key: key)
        try issue(name: "other", subjectAltName: "DNS:switchboard.invalid", key: key)
    }

    private func issue(name: String, subjectAltName: String, key: [String]) throws {
        let base = directory + "/" + name
        try Self.openssl(
            ["req", "-x509"] + key + ["-keyout", base + ".key", "-out", base + ".pem", "-days", "2",
            "-subj", "/CN=\(name)", "-CA", caFile, "-CAkey", directory + "/ca.key",
            "-addext", "subjectAltName=\(subjectAltName)", "-addext", "basicConstraints=CA:FALSE",
            "-addext", "extendedKeyUsage=serverAuth"])
    }

    /// Runs `openssl` with `arguments`; throws with its output when it fails.
    private static func openssl(_ arguments: [String]) throws {
        let result = try BlockingWork.runProcess("/usr/bin/env", ["openssl"] + arguments)
        guard result.status == 0 else {
            throw TestCertificateError(message: "openssl \(arguments.first ?? "") failed: \(result.output)")
        }
    }
}

/// `openssl` could not make a test certificate.
public struct TestCertificateError: Error, CustomStringConvertible {
    /// What failed, with openssl's output.
    public let message: String
    public var description: String { message }
}
