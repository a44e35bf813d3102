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
    .library(name: "MCUmgr", targets: ["MCUmgr"]),
    .executable(name: "readerctl", targets: ["readerctl"]),
    .executable(name: "reader-bench", targets: ["reader-bench"]),
  ],
  targets: [
    // Domain types, transport protocols, the scheduler and the pure state machines.
    .target(name: "ReaderCore", swiftSettings: strict),
    // The deterministic simulated world behind the transport protocols (Bluetooth readers, NFC tags).
    .target(name: "ReaderSimulator", dependencies: ["ReaderCore", "NFCKit", "PCSCKit"], swiftSettings: strict),
    // The Terminal facade and the drivers that run the state machines.
    .target(
      name: "ReaderKit",
      dependencies: [
        "ReaderCore", "ReaderSimulator", .target(name: "CLibcrypto", condition: .when(platforms: [.linux])),
        .target(name: "CLibssl", condition: .when(platforms: [.linux])),
        .target(name: "BlueZ", condition: .when(platforms: [.linux])),
      ], swiftSettings: strict),
    // The system's libcrypto, for SHA-256 on Linux (Apple platforms use CryptoKit).
    .systemLibrary(name: "CLibcrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
    // The system's libssl, for the update catalog's https on Linux (Apple platforms use URLSession).
    .systemLibrary(name: "CLibssl", pkgConfig: "libssl", providers: [.apt(["libssl-dev"])]),
    // MCUmgr's SMP (CBOR, frames, the client, MCUboot image updates) and the reader link over it; pure
    // Swift over a small transport protocol that a Bluetooth backend implements.
    .target(name: "MCUmgr", dependencies: ["ReaderCore"], swiftSettings: strict),
    // A small D-Bus client in Swift: the wire format (pure, bounded, fuzzed) and a Unix-socket connection.
    .target(name: "DBus", dependencies: ["ReaderCore"], swiftSettings: strict),
    // Real Bluetooth LE readers on Linux: BlueZ (bluetoothd) over the D-Bus system bus.
    .target(name: "BlueZ", dependencies: ["ReaderCore", "DBus", "MCUmgr"], swiftSettings: strict),
    // NDEF codec and NFC reader sessions, with the PC/SC backend's radio on Linux.
    .target(name: "NFCKit", dependencies: ["ReaderCore", "PCSCKit"], swiftSettings: strict),
    // PC/SC (pcsc-lite, loaded at run time) and the pure logic of NFC tags behind it: APDUs, Type 4
    // and Type 2 NDEF mappings.
    .target(name: "PCSCKit", dependencies: ["ReaderCore"], swiftSettings: strict),
    // A soak that holds the terminal and NFC sessions to the simulated world's ground truth, shared by
    // reader-bench (`soak`) and the tests.
    .target(
      name: "ReaderSoak", dependencies: ["ReaderKit", "ReaderCore", "ReaderSimulator", "NFCKit"],
      swiftSettings: strict),
    .executableTarget(
      name: "readerctl",
      dependencies: ["ReaderKit", "NFCKit", "PCSCKit", .target(name: "BlueZ", condition: .when(platforms: [.linux]))],
      swiftSettings: strict),
    // A validating walk over NDEF record headers in C: the bare baseline of reader-bench's structure decode.
    .target(name: "CNDEFHeaderWalk"),
    .executableTarget(
      name: "reader-bench",
      dependencies: [
        "ReaderKit", "NFCKit", "PCSCKit", "DBus", "ReaderSoak", "CNDEFHeaderWalk",
        .target(name: "BlueZ", condition: .when(platforms: [.linux])),
      ],
      swiftSettings: strict),
    // What the test targets share (`fixture(or:)`, child processes started with no signal blocked),
    // beside the Python peers in peer/ that the tests and .ci scripts start.
    .target(name: "TestSupport", path: "Tests/Support", exclude: ["peer"], swiftSettings: strict),
    .testTarget(name: "ReaderCoreTests", dependencies: ["ReaderCore", "TestSupport"], swiftSettings: strict),
    .testTarget(name: "ReaderSimulatorTests", dependencies: ["ReaderSimulator", "ReaderKit"], swiftSettings: strict),
    .testTarget(
      name: "ReaderKitTests",
      dependencies: ["ReaderKit", "ReaderSimulator", "ReaderSoak", "readerkit-store-probe", "TestSupport"],
      exclude: ["Updates/Server", "Soak/MUTANTS.md"], swiftSettings: strict),
    // The parsers of untrusted bytes as fuzz harnesses, their libFuzzer entry point, and the test that
    // replays the kept corpus (.ci/fuzz.sh runs the fuzzer itself).
    .target(
      name: "FuzzHarnesses", dependencies: ["ReaderKit", "ReaderCore", "NFCKit", "PCSCKit", "MCUmgr", "DBus", "BlueZ"],
      path: "Tests/FuzzHarnesses",
      swiftSettings: strict),
    .executableTarget(
      name: "readerkit-fuzz", dependencies: ["FuzzHarnesses"], path: "Tests/Fuzz", swiftSettings: strict),
    .testTarget(
      name: "FuzzCorpusTests", dependencies: ["FuzzHarnesses", "ReaderCore"], exclude: ["Corpus"],
      swiftSettings: strict),
    // A process that saves to a file store for ever, for the tests that kill it mid-save.
    .executableTarget(
      name: "readerkit-store-probe", dependencies: ["ReaderKit", "ReaderCore"], path: "Tests/StoreProbe",
      swiftSettings: strict),
    // Stripe's and Apple's samples again, in Swift 5 language mode, where many apps still are, and
    // spelled as apps spell them (`Error?`, without ExistentialAny).
    .testTarget(
      name: "ReaderKitSwift5Tests", dependencies: ["ReaderKit", "ReaderSimulator"],
      swiftSettings: [.swiftLanguageMode(.v5)]),
    .testTarget(
      name: "NFCKitSwift5Tests", dependencies: ["NFCKit", "ReaderSimulator"], swiftSettings: [.swiftLanguageMode(.v5)]),
    // The virtual NFC tags the PC/SC daemon tests present to pcscd's vpcd readers.
    .target(
      name: "PCSCTestSupport", dependencies: ["PCSCKit", "ReaderCore", "TestSupport"], path: "Tests/PCSCTestSupport",
      exclude: ["virtual_tag.py"], swiftSettings: strict),
    .testTarget(
      name: "NFCKitTests",
      dependencies: ["NFCKit", "ReaderCore", "ReaderSimulator", "PCSCKit", "PCSCTestSupport", "TestSupport"],
      exclude: ["Oracle"],
      swiftSettings: strict),
    .testTarget(
      name: "PCSCKitTests", dependencies: ["PCSCKit", "ReaderCore", "ReaderSimulator"], swiftSettings: strict),
    .testTarget(name: "DBusTests", dependencies: ["DBus"], swiftSettings: strict),
    .testTarget(
      name: "BlueZTests", dependencies: ["BlueZ", "DBus", "ReaderKit", "readerctl", "TestSupport"],
      swiftSettings: strict),
    .testTarget(
      name: "readerctlTests", dependencies: ["readerctl", "PCSCTestSupport", "TestSupport"], swiftSettings: strict),
    .testTarget(
      name: "MCUmgrTests", dependencies: ["MCUmgr", "ReaderCore", "ReaderKit", "ReaderSimulator", "TestSupport"],
      swiftSettings: strict),
  ],
  swiftLanguageModes: [.v6]
)
