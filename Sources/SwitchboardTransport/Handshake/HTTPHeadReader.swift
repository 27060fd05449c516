/// Accumulates bytes until the end of an HTTP/1.1 head (the blank line), within a size bound.
public struct HTTPHeadReader: Sendable {
    /// Why reading a head failed.
    public enum Failure: Error, Equatable, Sendable {
        /// The head grew past the limit before it ended.
        case tooLarge
    }

    /// Largest accepted head, blank line included.
    public let maxBytes: Int
    private var buffer: [UInt8] = []
    private var headEnd = HeadEnd()

    /// Creates a reader accepting heads up to `maxBytes`.
    public init(maxBytes: Int) { self.maxBytes = maxBytes }

    /// Appends `bytes`; returns the head (blank line included) and any bytes after it once the
    /// head is complete, nil while more bytes are needed.
    public mutating func append(
        _ bytes: UnsafeRawBufferPointer
    ) throws(Failure) -> (head: [UInt8], rest: [UInt8])? {
        buffer.append(contentsOf: bytes)
        if let end = headEnd.find(in: buffer) {
            guard end <= maxBytes else { throw .tooLarge }
            return (Array(buffer[..<end]), Array(buffer[end...]))
        }
        guard buffer.count <= maxBytes else { throw .tooLarge }
        return nil
    }

    /// Appends `bytes`; see `append(_:)` for the raw-buffer form.
    public mutating func append(_ bytes: [UInt8]) throws(Failure) -> (head: [UInt8], rest: [UInt8])? {
        let copy = bytes
        var result: Result<(head: [UInt8], rest: [UInt8])?, Failure> = .success(nil)
        copy.withUnsafeBytes { raw in
            result = Result { () throws(Failure) in try append(raw) }
        }
        return try result.get()
    }
}
