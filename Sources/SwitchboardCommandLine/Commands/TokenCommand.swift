import Foundation
import SwitchboardCrypto

/// `switchboard token`: mints a 007 login token for development.
public enum TokenCommand {
    static let table = OptionTable(
        command: "switchboard token",
        options: [
            OptionSpec("app-id", .value, "ID", "the app (SWITCHBOARD_APP_ID)"),
            OptionSpec("app-certificate", .value, "CERT", "the app's certificate (SWITCHBOARD_APP_CERTIFICATE)"),
            OptionSpec("user-id", .value, "USER", "the user the token logs in (SWITCHBOARD_USER_ID)"),
            OptionSpec("expire", .value, "SECONDS", "how long the token is valid (SWITCHBOARD_TOKEN_EXPIRE, default 3600)"),
        ],
        footer: "prints a 007 (AccessToken2) login token")

    /// Runs `token` with `arguments`; returns the token (or the help).
    public static func run(_ arguments: [String], environment: [String: String]) throws -> String {
        let options = try table.parse(arguments)
        if options.wantsHelp { return table.help }
        func value(_ name: String, _ variable: String) -> String? {
            options.value(name) ?? environment[variable].flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let appId = value("app-id", "SWITCHBOARD_APP_ID"),
            let certificate = value("app-certificate", "SWITCHBOARD_APP_CERTIFICATE"),
            let userId = value("user-id", "SWITCHBOARD_USER_ID")
        else { throw UsageError("token needs --app-id, --app-certificate and --user-id") }
        let expireText = value("expire", "SWITCHBOARD_TOKEN_EXPIRE") ?? "3600"
        guard let expire = UInt32(expireText) else { throw UsageError("--expire takes seconds, not '\(expireText)'") }
        return try mint(appId: appId, certificate: certificate, userId: userId, expire: expire)
    }

    /// A 007 login token for `userId`, valid for `expire` seconds from now.
    static func mint(appId: String, certificate: String, userId: String, expire: UInt32) throws -> String {
        try TokenMinter.mint007(
            appId: appId, appCertificate: certificate, userId: userId,
            issuedAt: UInt32(Date().timeIntervalSince1970), expireSeconds: expire,
            salt: UInt32.random(in: 1...UInt32.max))
    }
}
