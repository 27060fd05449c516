import SwitchboardCryptography

extension TCPStream {
    /// The stream a server speaks over for this accepted socket: itself, or a TLS stream over it
    /// when `context` is given; nil (socket closed) when no TLS session could be made. Loop only.
    func secured(with context: TLSContext?) -> (any ByteStream)? {
        guard let context else { return self }
        let session: TLSSession
        do {
            session = try TLSSession(context: context)
        } catch {
            close()
            return nil
        }
        let stream = TLSStream(inner: self, session: session)
        stream.start()
        return stream
    }
}
