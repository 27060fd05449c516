import SwitchboardCryptography

extension WebSocketServer {
    /// The stream the handshake runs on for an accepted socket: `tcp` itself, or a TLS stream
    /// over it when the server has a TLS context; nil (socket closed) when no session could be
    /// made. Loop only.
    func secured(_ tcp: TCPStream) -> (any ByteStream)? {
        guard let context = configuration.tls else { return tcp }
        let session: TLSSession
        do {
            session = try TLSSession(context: context)
        } catch {
            tcp.close()
            return nil
        }
        let stream = TLSStream(inner: tcp, session: session)
        stream.start()
        return stream
    }
}
