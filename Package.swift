// swift-tools-version: 6.0
import PackageDescription

/// The module targets talk to each other only through the bus in `SwitchboardCore`.
let moduleTargets = [
    "SwitchboardSession", "SwitchboardMessageRouter", "SwitchboardTopicRouter", "SwitchboardPresence", "SwitchboardStorage",
    "SwitchboardLock",
]

let package = Package(
    name: "Switchboard",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SwitchboardServer", targets: ["SwitchboardServer"]),
        .library(name: "SwitchboardCore", targets: ["SwitchboardCore"]),
        .library(name: "SwitchboardClient", targets: ["SwitchboardClient"]),
        .library(name: "SwitchboardTestKit", targets: ["SwitchboardTestKit"]),
        .library(name: "SwitchboardTesting", targets: ["SwitchboardTesting"]),
        .executable(name: "switchboard", targets: ["switchboard"]),
        .executable(name: "switchboard-bench", targets: ["switchboard-bench"]),
    ],
    targets: [
        // C shims.
        .target(name: "CLinux", path: "Sources/CLinux"),
        .systemLibrary(
            name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),

        // The reference's vocabulary (what an app sees), then the bus and what modules share.
        .target(name: "SwitchboardReference"),
        .target(name: "SwitchboardCore", dependencies: ["SwitchboardReference"]),

        // Modules (actors). Each imports SwitchboardCore and nothing else of ours.
        .target(name: "SwitchboardCrypto", dependencies: ["SwitchboardCore", "COpenSSL", "CZlib"]),
        .target(name: "SwitchboardSession", dependencies: ["SwitchboardCore"]),
        .target(name: "SwitchboardMessageRouter", dependencies: ["SwitchboardCore"]),
        .target(name: "SwitchboardTopicRouter", dependencies: ["SwitchboardCore"]),
        .target(name: "SwitchboardPresence", dependencies: ["SwitchboardCore"]),
        .target(name: "SwitchboardStorage", dependencies: ["SwitchboardCore", "CSQLite"]),
        .target(name: "SwitchboardLock", dependencies: ["SwitchboardCore"]),

        // Wire format and I/O.
        .target(name: "SwitchboardWire", dependencies: ["SwitchboardCore"]),
        .target(name: "SwitchboardTransport", dependencies: ["CLinux", "SwitchboardCrypto"]),

        // Composition, SDK, test support, executable.
        .target(
            name: "SwitchboardServer",
            dependencies: [
                "SwitchboardCore", "SwitchboardWire", "SwitchboardTransport",
                "SwitchboardSession", "SwitchboardMessageRouter", "SwitchboardCrypto",
                "SwitchboardTopicRouter",
                "SwitchboardPresence",
                "SwitchboardStorage",
                "SwitchboardLock",
            ]),
        .target(
            name: "SwitchboardClient",
            dependencies: [
                "SwitchboardReference", "SwitchboardCore", "SwitchboardWire", "SwitchboardTransport", "SwitchboardCrypto",
            ]),
        // Test support: the kit a module's tests need (Core only), and the server-level helpers.
        .target(name: "SwitchboardTestKit", dependencies: ["SwitchboardCore"]),
        .target(
            name: "SwitchboardTesting",
            dependencies: ["SwitchboardCore", "SwitchboardTestKit", "SwitchboardServer"]),
        .executableTarget(
            name: "switchboard",
            dependencies: ["SwitchboardServer", "SwitchboardCore", "SwitchboardCrypto", "SwitchboardTransport"]),

        // Load generator: raw WebSocket clients, not the SDK, so it stays lean.
        .target(name: "SwitchboardBench"),
        .executableTarget(
            name: "switchboard-bench",
            dependencies: ["SwitchboardBench", "SwitchboardCore", "SwitchboardWire", "SwitchboardTransport"]),

        // Tests: one target per target. A module's tests link the module and the test kit only.
        .testTarget(name: "SwitchboardCoreTests", dependencies: ["SwitchboardCore", "SwitchboardTestKit"]),
        .testTarget(name: "SwitchboardCryptoTests", dependencies: ["SwitchboardCrypto", "SwitchboardTestKit"]),
        .testTarget(name: "SwitchboardSessionTests", dependencies: ["SwitchboardSession", "SwitchboardTestKit"]),
        .testTarget(
            name: "SwitchboardMessageRouterTests",
            dependencies: ["SwitchboardMessageRouter", "SwitchboardTestKit"]),
        .testTarget(
            name: "SwitchboardTopicRouterTests",
            dependencies: ["SwitchboardTopicRouter", "SwitchboardTestKit"]),
        .testTarget(name: "SwitchboardPresenceTests", dependencies: ["SwitchboardPresence", "SwitchboardTestKit"]),
        .testTarget(name: "SwitchboardStorageTests", dependencies: ["SwitchboardStorage", "SwitchboardTestKit"]),
        .testTarget(name: "SwitchboardLockTests", dependencies: ["SwitchboardLock", "SwitchboardTestKit"]),
        .testTarget(name: "SwitchboardWireTests", dependencies: ["SwitchboardWire", "SwitchboardTestKit"]),
        .testTarget(
            name: "SwitchboardTransportTests",
            dependencies: ["SwitchboardTransport", "SwitchboardCrypto", "SwitchboardTestKit"]),
        .testTarget(
            name: "SwitchboardServerTests",
            dependencies: [
                "SwitchboardServer", "SwitchboardClient", "SwitchboardTesting", "SwitchboardTestKit",
                "SwitchboardWire", "SwitchboardTransport", "SwitchboardCrypto", "SwitchboardLock",
            ]),
        .testTarget(
            name: "SwitchboardClientTests",
            dependencies: [
                "SwitchboardClient", "SwitchboardCore", "SwitchboardServer", "SwitchboardTesting", "SwitchboardTestKit",
                "SwitchboardCrypto", "SwitchboardMessageRouter", "SwitchboardLock",
            ]),
        .testTarget(name: "SwitchboardBenchTests", dependencies: ["SwitchboardBench", "SwitchboardWire", "SwitchboardCore"]),
    ],
    swiftLanguageModes: [.v6]
)
