import SwitchboardCrypto
import SwitchboardTransport
import SwitchboardWire

extension ServerConfiguration {
    /// The listener's configuration: address, sizes and the admission limits, with every
    /// refusal logged with the peer's address and the reason.
    func transportConfiguration(
        subprotocol: String, refusals: RefusalLog, tls: TLSContext?
    ) -> WebSocketServer.Configuration {
        var transport = WebSocketServer.Configuration(
            host: host, port: port, subprotocol: subprotocol, requireSubprotocol: true,
            maxMessageBytes: Wire.maxFrameSize, maxOutboundBytes: maxOutboundBytesPerConnection, tls: tls)
        transport.allowedOrigins = allowedOrigins
        transport.maxConnectionsPerAddress = maxConnectionsPerAddress
        transport.connectionCapExemptAddresses = connectionCapExemptAddresses
        transport.maxFramesPerSecond = maxFramesPerSecond
        transport.onRefusal = { address, reason in refusals.refused(address, reason) }
        // Sessions are named by the login, never by a header: the links need none of them.
        transport.keepsRequestHeaders = false
        return transport
    }
}
