import SwitchboardCore

extension PayloadSealer {
    /// `metadata` with every value sealed as text (keys stay readable, as channel names do).
    func sealValues(_ metadata: Metadata) throws(RtmErrorInfo) -> Metadata {
        var sealed = metadata
        for index in sealed.items.indices { sealed.items[index].value = try sealText(sealed.items[index].value) }
        return sealed
    }

    /// `metadata` with every value that opens opened, and the keys of those that do not (another
    /// key or mode, a plain value, a changed byte): their values stay as stored, sealed. One such
    /// item does not cost the app the rest of the set.
    func openValues(_ metadata: Metadata) -> (metadata: Metadata, sealedKeys: Set<String>) {
        var opened = metadata
        var sealedKeys: Set<String> = []
        for index in opened.items.indices {
            do {
                opened.items[index].value = try openText(opened.items[index].value)
            } catch {
                sealedKeys.insert(opened.items[index].key)
            }
        }
        return (opened, sealedKeys)
    }
}
