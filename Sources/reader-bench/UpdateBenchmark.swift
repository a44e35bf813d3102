import Foundation
import ReaderKit
import ReaderSimulator

/// Benchmarks software updates; every figure is a ratio or a rate measured in this one run.
///
/// - `soak`: an M2 connected for `days` simulated days (walked out of range every hour, security
///   reboots), once as is and once with a catalog that publishes an optional update every day which
///   the app installs (a minute of simulated install, progress and all). Reports the wall time of
///   each and their ratio: what installing costs the soak.
/// - `pipeline`: a required update whose `imageMiB` MiB image sits in a file next to a manifest,
///   installed while connecting: manifest read, image read, size and SHA-256 check, transfer to the
///   simulated reader, install. Reports bytes per wall second through the whole pipeline against
///   reading the same file with `Data(contentsOf:)` and against hashing it alone.
func runUpdateBenchmark(days: Int, imageMiB: Int) -> [(String, Double)] {
  var results: [(String, Double)] = []

  var plainInstalls = 0
  let plain = BenchTimer.seconds { plainInstalls = UpdateSoak(days: days, catalog: false, releases: false).run() }
  var checkInstalls = 0
  let checks = BenchTimer.seconds { checkInstalls = UpdateSoak(days: days, catalog: true, releases: false).run() }
  var installs = 0
  let withUpdates = BenchTimer.seconds { installs = UpdateSoak(days: days, catalog: true, releases: true).run() }
  precondition(
    plainInstalls == 0 && checkInstalls == 0 && installs == days, "an update was installed every simulated day")
  results += [
    ("soak.plainMs", plain * 1000), ("soak.checksMs", checks * 1000), ("soak.withUpdatesMs", withUpdates * 1000),
    ("soak.installs", Double(installs)), ("soak.checkRatio", checks / plain),
    ("soak.installRatio", withUpdates / checks),
    ("soak.costRatio", withUpdates / plain),
  ]

  let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reader-bench-\(getpid())")
  try? FileManager.default.removeItem(at: directory)
  try! FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  let size = max(1, imageMiB) << 20
  var random = SeededRandom(seed: 5)
  let image = Data((0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) })
  let imageFile = directory.appendingPathComponent("m2.bin")
  try! image.write(to: imageFile)
  let manifest = directory.appendingPathComponent("manifest.json")
  try! pipelineManifest(size: size, digest: SHA256Checksum.compute(image).hex).write(
    to: manifest, atomically: true, encoding: .utf8)

  let pipeline = BenchTimer.seconds { UpdatePipeline(manifest: manifest).run() }
  let read = BenchTimer.seconds { precondition(try! Data(contentsOf: imageFile).count == size) }
  let hash = BenchTimer.seconds { precondition(SHA256Checksum.compute(image).bytes.count == 32) }
  results += [
    ("pipeline.bytes", Double(size)), ("pipeline.bytesPerSecond", Double(size) / pipeline),
    ("read.bytesPerSecond", Double(size) / read), ("hash.bytesPerSecond", Double(size) / hash),
    ("pipeline.toRead", read / pipeline), ("pipeline.toReadAndHash", (read + hash) / pipeline),
  ]
  return results
}

/// Prints the update benchmark's results, the ratios last.
func printUpdateBenchmark(_ results: [(String, Double)]) {
  let value = Dictionary(results, uniquingKeysWith: { $1 })
  func mb(_ key: String) -> String { String(format: "%.0f MB/s", value[key]! / 1e6) }
  print(
    """
    Update benchmark: best of \(BenchTimer.runs) runs
      soak, 30 simulated days of an M2 (720 walk-aways, 30 security reboots): \
    \(String(format: "%.1f", value["soak.plainMs"]!)) ms without a catalog, \
    \(String(format: "%.1f", value["soak.checksMs"]!)) ms with a catalog asked at every reconnection and every hour, \
    \(String(format: "%.1f", value["soak.withUpdatesMs"]!)) ms with \(Int(value["soak.installs"]!)) installs too \
    (one a day, each a simulated minute of progress)
      pipeline, a required update with a \(Int(value["pipeline.bytes"]!) >> 20) MiB image from a manifest file, \
    installed while connecting: \(mb("pipeline.bytesPerSecond"))
        reading the same file: \(mb("read.bytesPerSecond")); SHA-256 of it alone: \(mb("hash.bytesPerSecond"))
      ratios: soak with catalog checks / without = \(String(format: "%.2f", value["soak.checkRatio"]!)); \
    with installs / with checks only = \(String(format: "%.2f", value["soak.installRatio"]!)); \
    with installs / without a catalog = \(String(format: "%.2f", value["soak.costRatio"]!)); \
    pipeline throughput / file read = \(String(format: "%.2f", value["pipeline.toRead"]!)); \
    pipeline / (read + hash) = \(String(format: "%.2f", value["pipeline.toReadAndHash"]!))
    """)
}

private func pipelineManifest(size: Int, digest: String) -> String {
  """
  {"manifestVersion": 1, "releases": [{"deviceType": "stripeM2", "locations": "all", "version": "2.01.00.18",
  "releasedAt": "2025-06-01T00:00:00Z", "requiredAt": "2025-07-01T00:00:00Z", "components": ["firmware"],
  "durationEstimate": "estimate1To2Minutes", "image": {"url": "m2.bin", "size": \(size), "sha256": "\(digest)"}}]}
  """
}

/// Connects an M2 whose required update comes from a manifest file, and runs until it is installed.
private struct UpdatePipeline {
  let manifest: URL

  func run() {
    let clock = VirtualClock()
    let world = SimulatedBluetoothCentral(clock: clock, seed: 3)
    let serial = "STRM2-70001"
    world.add(SimulatedReader(serialNumber: serial, deviceType: .stripeM2, isCharging: true))
    let terminal = Terminal(
      central: world, scheduler: clock, store: InMemoryReaderStore(), seed: 3,
      updateCatalog: ManifestUpdateCatalog(manifestURL: manifest))
    let finder = UpdateFinder()
    terminal.discoverReaders(
      try! BluetoothScanDiscoveryConfigurationBuilder().setSimulated(true).setTimeout(3).build(), delegate: finder
    ) { _ in }
    clock.advance(by: .seconds(3))
    let config = try! BluetoothConnectionConfigurationBuilder(delegate: finder, locationId: "tml_bench").build()
    terminal.connectReader(finder.readers[0], connectionConfig: config) { (_: Result<Reader, ReaderError>) in }
    clock.advance(by: .seconds(120))
    precondition(world.reader(serial)?.softwareVersion == "2.01.00.18", "the update was installed")
  }
}

/// A 30-day soak, with or without a catalog, and with or without a daily update; returns how many
/// updates were installed.
private struct UpdateSoak {
  let days: Int
  let catalog: Bool
  let releases: Bool

  func run() -> Int {
    let clock = VirtualClock()
    let world = SimulatedBluetoothCentral(clock: clock, seed: 99)
    let serial = "STRM2-90001"
    world.add(SimulatedReader(serialNumber: serial, deviceType: .stripeM2, isCharging: true))
    let catalog = InMemoryUpdateCatalog(sha256: { SHA256Checksum.compute($0) })
    let terminal = Terminal(
      central: world, scheduler: clock, store: InMemoryReaderStore(), seed: 99,
      updateCatalog: self.catalog ? catalog : nil)
    let finder = UpdateFinder()
    terminal.discoverReaders(
      try! BluetoothScanDiscoveryConfigurationBuilder().setSimulated(true).setTimeout(3).build(), delegate: finder
    ) { _ in }
    clock.advance(by: .seconds(3))
    let config = try! BluetoothConnectionConfigurationBuilder(delegate: finder, locationId: "tml_soak").build()
    terminal.connectReader(finder.readers[0], connectionConfig: config) { (_: Result<Reader, ReaderError>) in }
    clock.advance(by: .seconds(5))
    let image = Data(repeating: 0x42, count: 64 << 10)
    let digest = SHA256Checksum.compute(image)
    for day in 0..<days {
      let start = Duration.seconds(Int64(day) * 86_400)
      for hour in 0..<24 {
        clock.schedule(after: start + .seconds(Int64(hour) * 3600 + 1800)) { world.walkAway(serial, for: .seconds(30)) }
      }
      guard releases else { continue }
      clock.schedule(after: start + .seconds(600)) {
        let version = "2.01.\(String(format: "%02d", day + 1)).00"
        let url = URL(string: "memory://updates/\(version).bin")!
        let now = Terminal.simulationEpoch.addingTimeInterval(Double(clock.elapsed.components.seconds))
        catalog.add(
          UpdateRelease(
            deviceType: .stripeM2, version: try! SoftwareVersion(version), releasedAt: now,
            requiredAt: now.addingTimeInterval(30 * 86_400), components: [.config],
            durationEstimate: .estimate1To2Minutes, image: FirmwareImage(url: url, size: image.count, sha256: digest)),
          image: image)
      }
      // The hourly check reports it; the app installs it in the evening.
      clock.schedule(after: start + .seconds(20 * 3600)) { terminal.installAvailableUpdate() }
    }
    clock.advance(by: .seconds(Int64(days) * 86_400))
    return finder.installs
  }
}

private nonisolated final class UpdateFinder: DiscoveryDelegate, MobileReaderDelegate, @unchecked Sendable {
  // Only touched on the thread that drives the virtual clock.
  var readers: [Reader] = []
  var installs = 0
  func terminal(_ terminal: Terminal, didUpdateDiscoveredReaders readers: [Reader]) { self.readers = readers }
  func reader(_ reader: Reader, didFinishInstallingUpdate update: ReaderSoftwareUpdate?, error: (any Error)?) {
    if update != nil && error == nil { installs += 1 }
  }
}
