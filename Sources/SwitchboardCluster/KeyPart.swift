import SwitchboardRedis

/// A part of a Redis key or channel name made from a name clients chose (an app id, a channel
/// name, a user id, a node id): percent-escaped, so a part holds no `{`, `}` or `:` and two
/// different parts never make one name.
public enum KeyPart {
    /// `part` with `%`, `{`, `}` and `:` percent-escaped.
    public static func escaped(_ part: String) -> String {
        guard part.utf8.contains(where: { $0 == 0x25 || $0 == 0x7B || $0 == 0x7D || $0 == 0x3A }) else { return part }
        var result = ""
        for character in part.unicodeScalars {
            switch character {
            case "%": result += "%25"
            case "{": result += "%7B"
            case "}": result += "%7D"
            case ":": result += "%3A"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }

    /// The part `escaped` made `text` from; nil when `text` is not such a part.
    public static func unescaped(_ text: Substring) -> String? {
        guard text.contains("%") else { return text.contains(where: { $0 == "{" || $0 == "}" || $0 == ":" }) ? nil : String(text) }
        var result = ""
        var rest = text[...]
        while let percent = rest.firstIndex(of: "%") {
            result += rest[..<percent]
            let code = rest[percent...].prefix(3)
            switch code {
            case "%25": result += "%"
            case "%7B": result += "{"
            case "%7D": result += "}"
            case "%3A": result += ":"
            default: return nil
            }
            rest = rest[percent...].dropFirst(3)
        }
        result += rest
        return result
    }
}

extension KeyPart {
    /// The hash tag's content of the pub/sub channel `channel` named `prefix` + tag + `suffix`;
    /// nil when it is not so named.
    static func tag(of channel: RedisChannel, prefix: String, suffix: String) -> Substring? {
        let name = String(decoding: channel.name, as: UTF8.self)
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count >= prefix.count + suffix.count else { return nil }
        return name.dropFirst(prefix.count).dropLast(suffix.count)
    }
}
