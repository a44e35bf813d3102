// swift-tools-version: 6.0
import PackageDescription

let strict: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
  name: "ReaderKit",
  platforms: [.macOS(.v15), .iOS(.v18)],
  products: [
    .library(name: "ReaderKit", targets: ["ReaderKit"]),
    .library(name: "ReaderSimulator", targets: ["ReaderSimulator"]),
    .library(name: "NFCKit", targets: ["NFCKit"]),
    .executable(name: "readerctl", targets: ["readerctl"]),
    .executable(name: "reader-bench", targets: ["reader-bench"]),
  ],
  targets: [
    // Domain types, transport protocols, the scheduler and the pure state machines.
    .target(name: "ReaderCore", swiftSettings: strict),
    // The deterministic simulated world behind the transport protocols (Bluetooth readers, NFC tags).
    .target(name: "ReaderSimulator", dependencies: ["ReaderCore", "NFCKit"], swiftSettings: strict),
    // The Terminal facade and the drivers that run the state machines.
    .target(
      name: "ReaderKit",
      dependencies: [
        "ReaderCore", "ReaderSimulator", .target(name: "CLibcrypto", condition: .when(platforms: [.linux])),
      ], swiftSettings: strict),
    // The system's libcrypto, for SHA-256 on Linux (Apple platforms use CryptoKit).
    .systemLibrary(name: "CLibcrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
    // NDEF codec and NFC reader sessions.
    .target(name: "NFCKit", dependencies: ["ReaderCore"], swiftSettings: strict),
    .executableTarget(name: "readerctl", dependencies: ["ReaderKit", "NFCKit"], swiftSettings: strict),
    // A soak that holds the terminal and NFC sessions to the simulated world's ground truth, shared by
    // reader-bench (`soak`) and the tests.
    .target(
      name: "ReaderSoak", dependencies: ["ReaderKit", "ReaderCore", "ReaderSimulator", "NFCKit"],
      swiftSettings: strict),
    .executableTarget(
      name: "reader-bench", dependencies: ["ReaderKit", "NFCKit", "ReaderSoak"], swiftSettings: strict),
    .testTarget(name: "ReaderCoreTests", dependencies: ["ReaderCore"], swiftSettings: strict),
    .testTarget(name: "ReaderSimulatorTests", dependencies: ["ReaderSimulator", "ReaderKit"], swiftSettings: strict),
    .testTarget(
      name: "ReaderKitTests", dependencies: ["ReaderKit", "ReaderSimulator", "ReaderSoak", "readerkit-store-probe"],
      exclude: ["Updates/Server", "Soak/MUTANTS.md"], swiftSettings: strict),
    // The parsers of untrusted bytes as fuzz harnesses, their libFuzzer entry point, and the test that
    // replays the kept corpus (.ci/fuzz.sh runs the fuzzer itself).
    .target(
      name: "FuzzHarnesses", dependencies: ["ReaderKit", "ReaderCore", "NFCKit"], path: "Tests/FuzzHarnesses",
      swiftSettings: strict),
    .executableTarget(
      name: "readerkit-fuzz", dependencies: ["FuzzHarnesses"], path: "Tests/Fuzz", swiftSettings: strict),
    .testTarget(
      name: "FuzzCorpusTests", dependencies: ["FuzzHarnesses"], exclude: ["Corpus"], swiftSettings: strict),
    // A process that saves to a file store for ever, for the tests that kill it mid-save.
    .executableTarget(
      name: "readerkit-store-probe", dependencies: ["ReaderKit", "ReaderCore"], path: "Tests/StoreProbe",
      swiftSettings: strict),
    // The Stripe-style samples again, in Swift 5 language mode, where many apps still are.
    .testTarget(
      name: "ReaderKitSwift5Tests", dependencies: ["ReaderKit", "ReaderSimulator"],
      swiftSettings: strict + [.swiftLanguageMode(.v5)]),
    .testTarget(
      name: "NFCKitTests", dependencies: ["NFCKit", "ReaderCore", "ReaderSimulator"], exclude: ["Oracle"],
      swiftSettings: strict),
    .testTarget(name: "readerctlTests", dependencies: ["readerctl"], swiftSettings: strict),
  ],
  swiftLanguageModes: [.v6]
)
