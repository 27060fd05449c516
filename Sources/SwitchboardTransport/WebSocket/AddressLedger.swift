/// Counts a server's sockets per peer IP address (handshaking and open alike) and admits a new
/// one only while its address is under the cap. Not thread-safe: the server keeps it under its
/// lock.
struct AddressLedger {
    /// Most sockets per address; nil for no cap.
    let cap: Int?
    /// Addresses the cap does not apply to (still counted).
    let exempt: Set<String>
    private var counts: [String: Int] = [:]
    private var owners: [UInt64: String] = [:]

    init(cap: Int?, exempt: Set<String>) {
        self.cap = cap
        self.exempt = exempt
    }

    /// Records socket `id` from `address` and returns true, or returns false (recording
    /// nothing) when the address already has `cap` sockets.
    mutating func admit(_ id: UInt64, address: String) -> Bool {
        let count = counts[address, default: 0]
        if let cap, count >= cap, !exempt.contains(address) { return false }
        counts[address] = count + 1
        owners[id] = address
        return true
    }

    /// Forgets socket `id`; forgetting one twice, or one never admitted, does nothing.
    mutating func release(_ id: UInt64) {
        guard let address = owners.removeValue(forKey: id) else { return }
        let remaining = counts[address, default: 1] - 1
        counts[address] = remaining > 0 ? remaining : nil
    }

    /// Sockets currently recorded for `address`.
    func count(for address: String) -> Int { counts[address, default: 0] }

    /// The IP part of "ip:port" or "[ipv6]:port".
    static func host(of remoteAddress: String) -> String {
        if remoteAddress.hasPrefix("["), let close = remoteAddress.firstIndex(of: "]") {
            return String(remoteAddress[remoteAddress.index(after: remoteAddress.startIndex)..<close])
        }
        guard let colon = remoteAddress.lastIndex(of: ":") else { return remoteAddress }
        return String(remoteAddress[..<colon])
    }
}
