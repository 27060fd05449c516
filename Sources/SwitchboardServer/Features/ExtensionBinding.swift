import SwitchboardCore
import SwitchboardWire

/// Extension modules' own operations (`x.<name>`), routed by name to whichever module handles it.
enum ExtensionBinding: FeatureBinding {
    static func answer(_ operation: ExtensionOperation, caller: Caller, bus: EventBus) async throws(RtmError) -> Answer {
        let body = try await bus.callExtension(ExtensionCall(caller: caller, name: operation.operation, body: operation.body))
        return .extension(ExtensionAnswer(operation.operation, body: body))
    }
}
