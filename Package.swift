// swift-tools-version: 6.0
import PackageDescription

/// The module targets (actors): each imports SwitchboardCore and what `moduleDependencies` adds,
/// nothing else of ours, and talks to the others through the bus only. Each has a test target
/// `<name>Tests` with the module and SwitchboardTestKit. tools/check-module-imports.sh reads this
/// list.
let moduleTargets = [
    "SwitchboardSession", "SwitchboardMessageRouter", "SwitchboardTopicRouter", "SwitchboardPresence", "SwitchboardStorage",
    "SwitchboardLock", "SwitchboardCrypto", "SwitchboardWebhooks",
]

/// What a module needs beyond SwitchboardCore: its C shims (and Crypto its primitives; Storage and
/// Webhooks the SQLite connection and its thread; Webhooks HMAC-SHA256 for its signatures).
let moduleDependencies: [String: [Target.Dependency]] = [
    "SwitchboardCrypto": ["SwitchboardCryptography", "COpenSSL", "CZlib"],
    "SwitchboardStorage": ["SwitchboardSQLite"],
    "SwitchboardWebhooks": ["SwitchboardSQLite", "SwitchboardCryptography"],
]

/// What a module's tests need beyond the module and SwitchboardTestKit: the contract its store
/// protocol's implementations keep, which the cluster's stores are tested against too.
let moduleTestDependencies: [String: [Target.Dependency]] = [
    "SwitchboardStorage": ["SwitchboardStorageContract", "SwitchboardSQLite"],
    "SwitchboardWebhooks": ["SwitchboardSQLite"],
    "SwitchboardLock": ["SwitchboardLockContract"],
    "SwitchboardPresence": ["SwitchboardPresenceContract"],
    "SwitchboardTopicRouter": ["SwitchboardTopicContract"],
]

let package = Package(
    name: "Switchboard",
    // The floor is the SDK's: apps on iOS 15 and macOS 12 (README, "Platforms"). Core, Wire and
    // the SDK count time in Core's `PortableDuration` (Swift's `Duration`, macOS 13 / iOS 16, on
    // Linux only) and read the monotonic clock directly there. The server's
    // targets run on Linux only (epoll), so this changes nothing for them; SwitchboardClient
    // reaches the epoll transport and OpenSSL on Linux only (the conditions below) and uses
    // Foundation's URLSession, CryptoKit and CommonCrypto on Apple platforms; Core and Wire use
    // nothing newer than the floor there (Synchronization, InlineArray and UTF8Span on Linux only).
    // tools/check-sdk-platform-symbols.sh holds them to this line.
    platforms: [.macOS(.v12), .iOS(.v15)],
    products: [
        .library(name: "SwitchboardServer", targets: ["SwitchboardServer"]),
        .library(name: "SwitchboardCore", targets: ["SwitchboardCore"]),
        .library(name: "SwitchboardCluster", targets: ["SwitchboardCluster"]),
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

        // SQLite without the bus: a connection and the thread it runs on (the metadata store's and
        // the webhook queue's).
        .target(name: "SwitchboardSQLite", dependencies: ["SwitchboardReference", "CSQLite"]),

        // Cryptography without the bus: AES-GCM, key derivation, digests, random, TLS (for the
        // transport, the SDK and the Crypto module alike).
        .target(name: "SwitchboardCryptography", dependencies: ["SwitchboardReference", "COpenSSL"]),

        // Wire format and I/O.
        .target(name: "SwitchboardWire", dependencies: ["SwitchboardCore"]),
        .target(name: "SwitchboardTransport", dependencies: ["CLinux", "SwitchboardCryptography"]),
        // The Redis client of cluster mode: the RESP2/RESP3 codec, commands and pub/sub over the
        // transport's event loops.
        .target(name: "SwitchboardRedis", dependencies: ["SwitchboardTransport", "SwitchboardCryptography", "SwitchboardReference"]),
        // Cluster mode: the link that carries bus traffic between nodes over Redis.
        .target(
            name: "SwitchboardCluster",
            dependencies: ["SwitchboardCore", "SwitchboardWire", "SwitchboardRedis", "SwitchboardTransport"]),
        // Cluster mode's stores: the modules' store protocols kept in the cluster's Redis (each
        // imports its module for the protocol; no module imports Redis).
        .target(
            name: "SwitchboardClusterStores",
            dependencies: [
                "SwitchboardCore", "SwitchboardStorage", "SwitchboardLock", "SwitchboardPresence", "SwitchboardRedis",
                "SwitchboardCluster", "SwitchboardTransport", "SwitchboardWire", "SwitchboardWebhooks", "SwitchboardTopicRouter",
            ]),

        // Composition, SDK, test support, executable.
        .target(
            name: "SwitchboardServer",
            dependencies: [
                "SwitchboardCore", "SwitchboardWire", "SwitchboardTransport", "SwitchboardCluster", "SwitchboardClusterStores",
                "SwitchboardSession", "SwitchboardMessageRouter", "SwitchboardCrypto",
                "SwitchboardTopicRouter",
                "SwitchboardPresence",
                "SwitchboardStorage",
                "SwitchboardLock",
                "SwitchboardWebhooks",
            ],
            // The admin page, compiled into the binary as bytes (`PackageResources`): no files to ship.
            resources: [
                .embedInCode("Admin/Page/admin.html"), .embedInCode("Admin/Page/admin.css"), .embedInCode("Admin/Page/admin.js"),
                .embedInCode("Admin/Page/favicon.svg"),
            ]),
        .target(
            name: "SwitchboardClient",
            dependencies: [
                "SwitchboardReference", "SwitchboardCore", "SwitchboardWire",
                .target(name: "SwitchboardTransport", condition: .when(platforms: [.linux])),
                .target(name: "SwitchboardCryptography", condition: .when(platforms: [.linux])),
            ]),
        // Test support: the kit a module's tests need (Core only), the contract every metadata
        // store keeps, and the server-level helpers.
        .target(name: "SwitchboardTestKit", dependencies: ["SwitchboardCore", "CLinux"]),
        .target(name: "SwitchboardStorageContract", dependencies: ["SwitchboardCore", "SwitchboardStorage"]),
        .target(name: "SwitchboardLockContract", dependencies: ["SwitchboardCore", "SwitchboardLock"]),
        .target(name: "SwitchboardPresenceContract", dependencies: ["SwitchboardCore", "SwitchboardPresence"]),
        .target(name: "SwitchboardTopicContract", dependencies: ["SwitchboardCore", "SwitchboardTopicRouter"]),
        .target(
            name: "SwitchboardTesting",
            dependencies: ["SwitchboardCore", "SwitchboardTestKit", "SwitchboardServer"]),
        // The `switchboard` command's pieces, as a library its tests drive in-process: option
        // tables, the configuration file and its layers, the commands, the command-line client.
        .target(
            name: "SwitchboardCommandLine",
            dependencies: [
                "SwitchboardServer", "SwitchboardCore", "SwitchboardCrypto", "SwitchboardTransport", "SwitchboardCluster",
                "SwitchboardRedis", "SwitchboardClient", "SwitchboardWebhooks", "CLinux",
            ]),
        .executableTarget(name: "switchboard", dependencies: ["SwitchboardCommandLine"]),

        // Load generator: raw WebSocket clients, not the SDK, so it stays lean.
        .target(name: "SwitchboardBench"),
        .executableTarget(
            name: "switchboard-bench",
            dependencies: ["SwitchboardBench", "SwitchboardCore", "SwitchboardWire", "SwitchboardTransport"]),

        // Tests: one target per target. A module's tests link the module and the test kit only.
        .testTarget(name: "SwitchboardCoreTests", dependencies: ["SwitchboardCore", "SwitchboardTestKit"]),
        .testTarget(name: "SwitchboardWireTests", dependencies: ["SwitchboardWire", "SwitchboardTestKit"]),
        .testTarget(
            name: "SwitchboardClusterTests",
            dependencies: [
                "SwitchboardCluster", "SwitchboardCore", "SwitchboardRedis", "SwitchboardTransport", "SwitchboardTestKit",
                "SwitchboardWire", "SwitchboardMessageRouter", "SwitchboardSession", "SwitchboardStorage",
                "SwitchboardLock", "SwitchboardPresence", "SwitchboardClusterStores", "SwitchboardTopicRouter",
            ]),
        .testTarget(
            name: "SwitchboardClusterStoresTests",
            dependencies: [
                "SwitchboardClusterStores", "SwitchboardCluster", "SwitchboardCore", "SwitchboardRedis", "SwitchboardStorage",
                "SwitchboardStorageContract", "SwitchboardLock", "SwitchboardLockContract", "SwitchboardPresence",
                "SwitchboardPresenceContract", "SwitchboardTestKit", "SwitchboardTransport", "SwitchboardWebhooks",
                "SwitchboardTopicRouter", "SwitchboardTopicContract",
            ]),
        .testTarget(
            name: "SwitchboardRedisTests", dependencies: ["SwitchboardRedis", "SwitchboardTransport", "SwitchboardTestKit"]),
        .testTarget(
            name: "SwitchboardTransportTests",
            dependencies: ["SwitchboardTransport", "SwitchboardCrypto", "SwitchboardTestKit"]),
        .testTarget(
            name: "SwitchboardServerTests",
            dependencies: [
                "SwitchboardServer", "SwitchboardClient", "SwitchboardTesting", "SwitchboardTestKit",
                "SwitchboardWire", "SwitchboardTransport", "SwitchboardCrypto", "SwitchboardLock", "SwitchboardWebhooks",
            ]),
        .testTarget(
            name: "SwitchboardClientTests",
            dependencies: [
                "SwitchboardClient", "SwitchboardCore", "SwitchboardServer", "SwitchboardTesting", "SwitchboardTestKit",
                "SwitchboardCrypto", "SwitchboardMessageRouter", "SwitchboardLock",
            ]),
        .testTarget(
            name: "SwitchboardCommandLineTests",
            dependencies: [
                "SwitchboardCommandLine", "SwitchboardServer", "SwitchboardClient", "SwitchboardCore", "SwitchboardTesting",
                "SwitchboardTestKit",
            ]),
        .testTarget(name: "SwitchboardBenchTests", dependencies: ["SwitchboardBench", "SwitchboardWire", "SwitchboardCore"]),
    ]
        // Modules (actors) and their tests, from the one list above.
        + moduleTargets.map { .target(name: $0, dependencies: ["SwitchboardCore"] + (moduleDependencies[$0] ?? [])) }
        + moduleTargets.map {
            .testTarget(
                name: "\($0)Tests", dependencies: [.target(name: $0), "SwitchboardTestKit"] + (moduleTestDependencies[$0] ?? []))
        },
    swiftLanguageModes: [.v6]
)
