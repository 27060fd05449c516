import SwitchboardCore

extension PayloadSealer {
    /// `metadata` with every value sealed as text (keys stay readable, as channel names do).
    func sealValues(_ metadata: Metadata) throws(RtmErrorInfo) -> Metadata {
        var sealed = metadata
        for index in sealed.items.indices { sealed.items[index].value = try sealText(sealed.items[index].value) }
        return sealed
    }

    /// `metadata` with every value opened; throws when one does not open.
    func openValues(_ metadata: Metadata) throws(RtmErrorInfo) -> Metadata {
        var opened = metadata
        for index in opened.items.indices { opened.items[index].value = try openText(opened.items[index].value) }
        return opened
    }
}
