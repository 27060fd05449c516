import SwitchboardCore

/// The checks of a metadata write that need no stored data: revisions, keys, values, counts and
/// leases, each refused with the reference's code. The store checks the rest (`MetadataRules`).
enum MetadataRequestCheck {
    /// Checks `data` for a write of `kind`.
    static func check(
        _ data: Metadata, kind: MetadataWriteKind, operation: String, limits: Limits
    ) throws(RtmError) {
        try checkRevision(data.majorRevision, "majorRevision", operation)
        if kind != .remove && data.items.isEmpty {
            throw RtmError(.storageInvalidArgument, operation: operation, reason: "no metadata items given")
        }
        guard data.items.count <= limits.storage.itemsPerSet else {
            throw RtmError(
                .storageMetadataItemExceedLimitation, operation: operation,
                reason: "\(data.items.count) items; at most \(limits.storage.itemsPerSet)")
        }
        var keys = Set<String>()
        for item in data.items {
            try checkKey(item.key, operation, limits)
            guard keys.insert(item.key).inserted else {
                throw RtmError(.storageDuplicateKey, operation: operation, reason: "key '\(item.key)' is given twice")
            }
            try checkRevision(item.revision, "revision of '\(item.key)'", operation)
            guard kind != .remove else { continue }
            let size = item.value.utf8.count
            guard size <= limits.storage.valueMaxBytes else {
                throw RtmError(
                    .storageValueLengthOverflow, operation: operation,
                    reason: "value of '\(item.key)' is \(size) bytes; at most \(limits.storage.valueMaxBytes)")
            }
            if case .timeToLive(let milliseconds) = item.lease,
                milliseconds == 0 || milliseconds > limits.storage.leaseMaxMilliseconds
            {
                throw RtmError(
                    .storageInvalidArgument, operation: operation,
                    reason: "lease of '\(item.key)' is \(milliseconds) ms; 1 to \(limits.storage.leaseMaxMilliseconds)")
            }
        }
    }

    /// -1 (no check) or a positive revision.
    private static func checkRevision(_ revision: Int64, _ what: String, _ operation: String) throws(RtmError) {
        guard revision == -1 || revision > 0 else {
            throw RtmError(.storageInvalidRevision, operation: operation, reason: "\(what) is \(revision); -1 or positive")
        }
    }

    /// Non-empty, at most `limits.storage.keyMaxLength` characters, no control characters.
    private static func checkKey(_ key: String, _ operation: String, _ limits: Limits) throws(RtmError) {
        guard !key.isEmpty else { throw RtmError(.storageInvalidKey, operation: operation, reason: "a key is empty") }
        let length = key.unicodeScalars.count
        guard length <= limits.storage.keyMaxLength else {
            throw RtmError(
                .storageKeyLengthOverflow, operation: operation,
                reason: "key is \(length) characters; at most \(limits.storage.keyMaxLength)")
        }
        guard !key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw RtmError(.storageInvalidKey, operation: operation, reason: "a key has a control character")
        }
    }
}
