import Foundation
import SwitchboardCrypto

/// `switchboard token`: mints a 007 login token for development.
enum TokenCommand {
    static let usage = """
        switchboard token --app-id ID --app-certificate CERT --user-id USER [--expire SECONDS]
          prints a 007 (AccessToken2) login token valid for SECONDS (default 3600)
        """

    static func run(_ arguments: [String]) throws {
        let options = try CommandLineOptions(arguments, flagNames: ["help"], environment: ProcessInfo.processInfo.environment)
        if options.givenNames.contains("help") {
            print(usage)
            return
        }
        guard let appId = options.value("app-id", env: "SWITCHBOARD_APP_ID"),
            let certificate = options.value("app-certificate", env: "SWITCHBOARD_APP_CERTIFICATE"),
            let userId = options.value("user-id", env: "SWITCHBOARD_USER_ID")
        else { throw UsageError("token needs --app-id, --app-certificate and --user-id") }
        let expireText = options.value("expire", env: "SWITCHBOARD_TOKEN_EXPIRE") ?? "3600"
        guard let expire = UInt32(expireText) else { throw UsageError("--expire takes seconds, not '\(expireText)'") }
        let token = try TokenMinter.mint007(
            appId: appId, appCertificate: certificate, userId: userId,
            issuedAt: UInt32(Date().timeIntervalSince1970), expireSeconds: expire,
            salt: UInt32.random(in: 1...UInt32.max))
        print(token)
    }
}
