import Foundation
import SwitchboardCore
import SwitchboardWire

/// Calling the operations of the server's extension modules (a Switchboard extension: an
/// embedding app can add actors of its own with operations of their own, see Modules.md).
extension RtmClientKit {
    /// Calls the extension operation `name` with a string argument; the response carries what
    /// the module answered.
    public func callExtension(_ name: String, body: String = "") async -> (RtmExtensionEvent?, RtmErrorInfo?) {
        await extensionCall(name, .string(body)).result()
    }

    /// Calls the extension operation `name` with a binary argument.
    public func callExtension(_ name: String, data: Data) async -> (RtmExtensionEvent?, RtmErrorInfo?) {
        await extensionCall(name, .binary(Array(data))).result()
    }

    /// Calls the extension operation `name`, calling `completionBlock` when done.
    public func callExtension(
        _ name: String, body: String = "",
        completion completionBlock: (@Sendable (RtmExtensionEvent?, RtmErrorInfo?) -> Void)? = nil
    ) {
        extensionCall(name, .string(body)).complete(completionBlock)
    }

    private func extensionCall(_ name: String, _ body: MessagePayload) -> RtmCall<RtmExtensionEvent> {
        call({ .extension(ExtensionOperation(name, body: body)) }) { answer throws(RtmErrorInfo) in
            guard case .extension(let answered) = answer else {
                throw RtmErrorInfo(.invalidParameter, operation: "x.\(name)", reason: "unexpected answer")
            }
            return RtmExtensionEvent(name: answered.operation, body: answered.body.map(RtmMessage.init))
        }
    }
}
