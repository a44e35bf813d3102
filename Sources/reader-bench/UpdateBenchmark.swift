import Foundation
import ReaderCore
import ReaderKit
import ReaderSimulator

/// Benchmarks software updates; every figure is a ratio taken within one round of this run (see
/// `Comparison`).
///
/// - `soak`: an M2 connected for `days` simulated days (walked out of range every hour, security
///   reboots), once as is and once with a catalog that publishes an optional update every day which
///   the app installs (a minute of simulated install, progress and all). Reports what the catalog
///   checks and the installs cost the soak.
/// - `image`: a required update whose `imageMiB` MiB image sits in a file next to a manifest,
///   installed while connecting: manifest read, image read, size and SHA-256 check, transfer to the
///   simulated reader, install; against reading the same file with `Data(contentsOf:)` and hashing it
///   (the bare baseline), and against reading it alone.
func runUpdateBenchmark(days: Int, imageMiB: Int) -> [Ratio] {
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
  let digest = SHA256Checksum.compute(image)
  try! pipelineManifest(size: size, digest: digest.hex).write(to: manifest, atomically: true, encoding: .utf8)

  let installs = Locked(0)
  let timings = Comparison([
    .init("update.soak.plain") {
      precondition(UpdateSoak(days: days, catalog: false, releases: false).run() == 0, "nothing installed")
    },
    .init("update.soak.checks") {
      precondition(UpdateSoak(days: days, catalog: true, releases: false).run() == 0, "nothing installed")
    },
    .init("update.soak.installs") {
      installs.withLock { $0 = UpdateSoak(days: days, catalog: true, releases: true).run() }
    },
    .init("update.image.pipeline") { UpdatePipeline(manifest: manifest).run() },
    .init("update.image.readAndHash") {
      let data = try! Data(contentsOf: imageFile)
      precondition(data.count == size && SHA256Checksum.compute(data) == digest, "the image reads back whole")
    },
    .init("update.image.read") { precondition(try! Data(contentsOf: imageFile).count == size) },
  ]).measure()
  if BenchOptions.current.includes("update.soak.installs") {
    precondition(installs.withLock { $0 } == days, "an update was installed every simulated day")
  }

  let ratios = [
    timings.ratio("update.soak: with catalog checks / without", "update.soak.checks", over: "update.soak.plain"),
    timings.ratio("update.soak: with installs / with checks only", "update.soak.installs", over: "update.soak.checks"),
    timings.ratio(
      "update.image: read+hash / pipeline", "update.image.readAndHash", over: "update.image.pipeline",
      goal: .atLeast(0.9)),
    timings.ratio("update.image: read / pipeline", "update.image.read", over: "update.image.pipeline"),
  ]
  print(
    """
    Update benchmark: \(BenchOptions.current.rounds) rounds
      soak: \(days) simulated days of an M2 (walk-aways every hour, security reboots), without a catalog, with a \
    catalog asked at every reconnection and every hour, and with \(days) installs too (one a day, a simulated \
    minute of progress each)
      image: a required update with a \(size >> 20) MiB image from a manifest file, installed while connecting \
    (median \(String(format: "%.0f", Double(size) / timings.median("update.image.pipeline") / 1e6)) MB/s), \
    against reading the file and hashing it (median \
    \(String(format: "%.0f", Double(size) / timings.median("update.image.readAndHash") / 1e6)) MB/s)
    """)
  print(ratios.map(\.line).joined(separator: "\n"))
  return ratios
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
