import SwitchboardCryptography

/// Receives the life of a `StreamConnection`. Every call happens on the connection's event loop
/// thread, in order: any number of reads, then one close. The calls share the loop with every
/// other socket on it, so they must return quickly and never block.
public protocol StreamConnectionHandler: AnyObject, Sendable {
    /// Bytes arrived; they are valid only during the call.
    func connection(_ connection: StreamConnection, received bytes: UnsafeRawBufferPointer)
    /// The connection closed: the peer closed or failed, `close()` was called, or the loop shut
    /// down. Called once; nothing is received afterwards. `error` says why when TLS, a read or a
    /// write failed; nil when the peer closed the connection or this side did.
    func connectionClosed(_ connection: StreamConnection, error: StreamConnectionError?)
}

/// Why a client stream could not be opened, or why it closed.
public enum StreamConnectionError: Error, Equatable, Sendable {
    /// The host name did not resolve.
    case resolutionFailed(String)
    /// The TCP connection failed with this errno.
    case connectFailed(Int32)
    /// Connecting took longer than the timeout.
    case timedOut
    /// TLS failed: the certificate was not trusted or not for this host, or the two sides could
    /// not agree.
    case tlsFailed(TLSError)
    /// The event loop was shut down.
    case shutDown
    /// Reading or writing failed with this errno (the peer reset the connection, say).
    case ioFailed(Int32)
}
