import Foundation
import Synchronization
import SwitchboardCrypto

/// The keys that open the server API. Only their SHA-256 digests are kept; a presented key is
/// hashed and compared with every digest in constant time (no early exit, the same work whether
/// or not it matches and wherever it differs), so the answer's timing tells nothing of a key.
final class APIKeyring: Sendable {
    /// The shortest key accepted: 16 bytes, so a key cannot be guessed by trying.
    static let minimumKeyBytes = 16

    /// Why keys could not be loaded.
    struct LoadError: Error, CustomStringConvertible {
        let description: String
    }

    let source: APIKeySource
    private let digests = Mutex<[[UInt8]]>([])

    /// Loads the keys of `source`; throws when there are none, or one is too short, or the file
    /// cannot be read (naming it).
    init(_ source: APIKeySource) throws(LoadError) {
        self.source = source
        try reload()
    }

    /// How many keys open the API now.
    var count: Int { digests.withLock { $0.count } }

    /// Reads the keys again (from the file, for `.file`); on failure the keys in force stay.
    func reload() throws(LoadError) {
        let keys: [String]
        switch source {
        case .keys(let given): keys = given
        case .file(let path):
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw LoadError(description: "cannot read the API key file \(path)")
            }
            keys = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        }
        guard !keys.isEmpty else { throw LoadError(description: "no API keys in \(Self.name(of: source))") }
        guard keys.allSatisfy({ $0.utf8.count >= Self.minimumKeyBytes }) else {
            throw LoadError(description: "an API key in \(Self.name(of: source)) is shorter than \(Self.minimumKeyBytes) bytes")
        }
        let hashed = keys.map { CryptoPrimitives.sha256(Array($0.utf8)) }
        digests.withLock { $0 = hashed }
    }

    /// The digest of the key `presented` matches, or nil.
    func match(_ presented: String) -> [UInt8]? {
        let digest = CryptoPrimitives.sha256(Array(presented.utf8))
        var found: [UInt8]?
        for candidate in digests.withLock({ $0 }) where CryptoPrimitives.constantTimeEquals(candidate, digest) {
            found = candidate
        }
        return found
    }

    private static func name(of source: APIKeySource) -> String {
        if case .file(let path) = source { path } else { "the configuration" }
    }
}
