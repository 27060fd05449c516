import SwitchboardCore
import SwitchboardWire

/// A node's status as it lies in Redis (`NodeDirectory`): the status without its apps, in
/// MessagePack; and one app's load, as a field of the node's app hash (`"sessions connections"`).
enum NodeStatusRecord {
    /// The version of this layout; a record of another reads as no status.
    static let version = 1

    /// `status` without its apps, as bytes.
    static func encoded(_ status: NodeStatus) -> [UInt8] {
        var writer = MessagePackWriter(reservingCapacity: 160)
        writer.writeArrayHeader(11)
        writer.writeInteger(version)
        writer.writeString(status.nodeID ?? "")
        writer.writeString(status.version)
        writer.writeString(status.url)
        writer.writeString(status.host)
        writer.writeUInt(status.startedAt.millisecondsSince1970)
        writer.writeArrayHeader(status.checks.count)
        for check in status.checks {
            writer.writeArrayHeader(2)
            writer.writeString(check.name)
            if let problem = check.problem { writer.writeString(problem) } else { writer.writeNil() }
        }
        writer.writeInteger(status.awaitingLogin)
        writer.writeInteger(status.loggedIn)
        writer.writeInteger(status.attachedSessions)
        writer.writeInteger(status.detachedSessions)
        return writer.bytes
    }

    /// Reads a status (with no apps); throws on bytes of another layout or version.
    static func decoded(_ bytes: [UInt8]) throws(WireError) -> NodeStatus {
        var reader = MessagePackReader(bytes)
        guard try reader.readArrayHeader() == 11, try reader.readInteger(Int.self) == version else {
            throw WireError(.invalidValue("not a node status of version \(version)"), offset: reader.offset)
        }
        let nodeID = try reader.readString()
        let serverVersion = try reader.readString()
        let url = try reader.readString()
        let host = try reader.readString()
        let startedAt = WallClockTime(millisecondsSince1970: try reader.readInteger(UInt64.self))
        var checks: [ReadinessState] = []
        let checkCount = try reader.readArrayHeader()
        for _ in 0..<checkCount {
            guard try reader.readArrayHeader() == 2 else { throw WireError(.invalidValue("a readiness check"), offset: reader.offset) }
            let name = try reader.readString()
            checks.append(ReadinessState(name: name, problem: try reader.readNilIfPresent() ? nil : try reader.readString()))
        }
        let status = NodeStatus(
            nodeID: nodeID.isEmpty ? nil : nodeID, version: serverVersion, url: url, host: host, startedAt: startedAt, checks: checks,
            awaitingLogin: try reader.readInteger(Int.self), loggedIn: try reader.readInteger(Int.self),
            attachedSessions: try reader.readInteger(Int.self), detachedSessions: try reader.readInteger(Int.self))
        guard reader.isAtEnd else { throw WireError(.trailingBytes(reader.remaining), offset: reader.offset) }
        return status
    }

    /// An app's load as its field's value.
    static func encoded(_ load: AppLoad) -> [UInt8] { Array("\(load.sessions) \(load.connections)".utf8) }

    /// The load a field's value holds; nil when it holds none.
    static func decodedLoad(_ bytes: [UInt8]) -> AppLoad? {
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: " ")
        guard parts.count == 2, let sessions = Int(parts[0]), let connections = Int(parts[1]) else { return nil }
        return AppLoad(sessions: sessions, connections: connections)
    }
}
