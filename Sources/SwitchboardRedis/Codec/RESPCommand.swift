/// Commands as RESP arrays of bulk strings, the form every Redis version accepts.
public enum RESPCommand {
    /// Appends the command made of `arguments` (its name first) to `output`.
    public static func encode(_ arguments: [[UInt8]], into output: inout [UInt8]) {
        output.reserveCapacity(output.count + 16 + arguments.reduce(0) { $0 + $1.count + 16 })
        header(UInt8(ascii: "*"), arguments.count, into: &output)
        for argument in arguments {
            header(UInt8(ascii: "$"), argument.count, into: &output)
            output.append(contentsOf: argument)
            output.append(13)
            output.append(10)
        }
    }

    /// The command made of `arguments` (its name first), as bytes to send.
    public static func encode(_ arguments: [String]) -> [UInt8] {
        var output: [UInt8] = []
        encode(arguments.map { Array($0.utf8) }, into: &output)
        return output
    }

    /// `*3\r\n` or `$5\r\n`.
    private static func header(_ type: UInt8, _ count: Int, into output: inout [UInt8]) {
        output.append(type)
        output.append(contentsOf: String(count).utf8)
        output.append(13)
        output.append(10)
    }
}
