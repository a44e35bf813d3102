import Foundation
import ReaderKit
import ReaderSimulator

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// One run of the app on a station's phone, from its launch to its death: what its terminal talks to.
///
/// It stands between the terminal and the world, and between the store and the disk: while the app
/// lives it forwards everything; once it is dead it forwards nothing, in either direction, as a dead
/// process neither sends nor hears. A killed app's terminal still has timers on the shared clock; they
/// fire into a process that is gone and change nothing.
final class SoakProcess: BluetoothCentral, ReaderLink, @unchecked Sendable {
  // Confined to the thread that drives the clock.
  let world: SimulatedBluetoothCentral
  /// The launch number on its station, from 1.
  let generation: Int
  private(set) var isAlive = true
  /// Faults for the harness's own tests: the process loses what the sabotage says.
  let sabotage: SoakSabotage?
  private var handler: (@Sendable (BluetoothEvent) -> Void)?
  private var linkHandler: (@Sendable (ReaderLinkEvent) -> Void)?
  private var dropped = 0

  init(world: SimulatedBluetoothCentral, generation: Int, sabotage: SoakSabotage?) {
    self.world = world
    self.generation = generation
    self.sabotage = sabotage
  }

  /// The app dies here: from now on nothing passes.
  func die() { isAlive = false }

  // MARK: BluetoothCentral

  func setEventHandler(_ handler: @escaping @Sendable (BluetoothEvent) -> Void) {
    self.handler = handler
    world.setEventHandler { [self] event in
      guard isAlive, let handler = self.handler else { return }
      if case .didDisconnect = event, sabotage == .loseEveryLinkLoss { return }
      if case .didDisconnect = event, sabotage == .loseEverySecondLinkLoss {
        dropped += 1
        if dropped % 2 == 0 { return }
      }
      handler(event)
    }
  }

  var isPoweredOn: Bool { world.isPoweredOn }

  func startScan() { if isAlive { world.startScan() } }
  func stopScan() { if isAlive { world.stopScan() } }
  func connect(serialNumber: String) { if isAlive { world.connect(serialNumber: serialNumber) } }
  func cancelConnect(serialNumber: String) { if isAlive { world.cancelConnect(serialNumber: serialNumber) } }
  func disconnect(serialNumber: String) { if isAlive { world.disconnect(serialNumber: serialNumber) } }

  // MARK: ReaderLink

  func setLinkEventHandler(_ handler: @escaping @Sendable (ReaderLinkEvent) -> Void) {
    linkHandler = handler
    world.setLinkEventHandler { [self] event in
      guard isAlive, let linkHandler else { return }
      linkHandler(event)
    }
  }

  func flashLEDs(serialNumber: String) { if isAlive { world.flashLEDs(serialNumber: serialNumber) } }
  func reboot(serialNumber: String) { if isAlive { world.reboot(serialNumber: serialNumber) } }
  func installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?) {
    if isAlive { world.installUpdate(serialNumber: serialNumber, update: update, image: image) }
  }
  func cancelUpdate(serialNumber: String) { if isAlive { world.cancelUpdate(serialNumber: serialNumber) } }
}

/// Breakage the soak's own tests put between a terminal and its world, to see the soak catch it.
package enum SoakSabotage: Sendable, Hashable {
  /// Every link loss the world reports is lost on the way to the terminal.
  case loseEveryLinkLoss
  /// Every second link loss the world reports is lost on the way to the terminal.
  case loseEverySecondLinkLoss
}

/// A process's view of the disk: the disk itself while the app lives, nothing once it is dead. It can
/// be armed to kill the app at a given call, which then fails without effect.
final class SoakProcessFileSystem: FileSystem, @unchecked Sendable {
  // Confined to the thread that drives the clock.
  let disk: SoakDisk
  let process: SoakProcess
  /// Calls left before the app is killed, when armed.
  var callsBeforeDeath: Int?
  /// Called once, at the call that kills the app.
  var onDeath: (() -> Void)?

  init(disk: SoakDisk, process: SoakProcess) {
    self.disk = disk
    self.process = process
  }

  /// Lets the call through, or fails it (`EIO`) because the app is dead or dies at this call.
  private func pass() throws(Errno) {
    guard process.isAlive else { throw Errno(EIO) }
    guard let left = callsBeforeDeath else { return }
    guard left <= 1 else {
      callsBeforeDeath = left - 1
      return
    }
    callsBeforeDeath = nil
    process.die()
    onDeath?()
    throw Errno(EIO)
  }

  func open(_ path: String, _ mode: OpenMode) throws(Errno) -> Int32 {
    try pass()
    return try disk.open(path, mode)
  }
  func close(_ descriptor: Int32) throws(Errno) {
    try pass()
    try disk.close(descriptor)
  }
  func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
    try pass()
    return try disk.read(descriptor, into: buffer)
  }
  func write(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
    try pass()
    return try disk.write(descriptor, from: buffer)
  }
  func sync(_ descriptor: Int32) throws(Errno) {
    try pass()
    try disk.sync(descriptor)
  }
  func info(_ descriptor: Int32) throws(Errno) -> FileInfo {
    try pass()
    return try disk.info(descriptor)
  }
  func info(atPath path: String, followingLinks: Bool) throws(Errno) -> FileInfo {
    try pass()
    return try disk.info(atPath: path, followingLinks: followingLinks)
  }
  func makeDirectory(_ path: String, permissions: mode_t) throws(Errno) {
    try pass()
    try disk.makeDirectory(path, permissions: permissions)
  }
  func rename(_ source: String, to destination: String) throws(Errno) {
    try pass()
    try disk.rename(source, to: destination)
  }
  func link(_ source: String, to destination: String) throws(Errno) {
    try pass()
    try disk.link(source, to: destination)
  }
  func unlink(_ path: String) throws(Errno) {
    try pass()
    try disk.unlink(path)
  }
  func lockExclusively(_ descriptor: Int32) throws(Errno) {
    try pass()
    try disk.lockExclusively(descriptor)
  }
  func contentsOfDirectory(_ path: String) throws(Errno) -> [String] {
    try pass()
    return try disk.contentsOfDirectory(path)
  }
}

/// Catalog faults armed on a station: each makes the next call of its kind within `window` fail, once
/// (arming one twice before that call still fails only one call).
final class SoakCatalogFaults: @unchecked Sendable {
  // Confined to the thread that drives the clock.
  /// How long an armed fault waits for its call.
  static let window = Duration.seconds(600)
  let clock: VirtualClock
  var checkFailsUntil: Duration?
  var imageFailsUntil: Duration?

  init(clock: VirtualClock) { self.clock = clock }

  /// Whether the call fails: a fault is armed for it and not past its window. Disarms it.
  func takes(_ armed: inout Duration?) -> Bool {
    defer { armed = nil }
    return armed.map { clock.elapsed <= $0 } ?? false
  }
}

/// A process's view of the update catalog: the station's catalog while the app lives, failing the
/// calls the station's catalog faults say; a dead app's terminal (whose timers still fire on the shared
/// clock) gets errors and uses up no fault.
final class SoakProcessCatalog: UpdateCatalog, @unchecked Sendable {
  // Confined to the thread that drives the clock.
  let catalog: InMemoryUpdateCatalog
  let faults: SoakCatalogFaults
  let process: SoakProcess

  init(catalog: InMemoryUpdateCatalog, faults: SoakCatalogFaults, process: SoakProcess) {
    self.catalog = catalog
    self.faults = faults
    self.process = process
  }

  func availableUpdate(for installed: InstalledSoftware, at now: Date) throws(ReaderError) -> UpdateAvailability {
    guard process.isAlive else { throw ReaderError(.updateCatalogUnavailable, "the app is not running") }
    if faults.takes(&faults.checkFailsUntil) {
      throw ReaderError(.updateCatalogUnavailable, "injected: the catalog did not answer")
    }
    return try catalog.availableUpdate(for: installed, at: now)
  }

  func firmwareImage(for image: FirmwareImage) throws(ReaderError) -> Data {
    guard process.isAlive else { throw ReaderError(.updateCatalogUnavailable, "the app is not running") }
    if faults.takes(&faults.imageFailsUntil) {
      throw ReaderError(.updateCatalogUnavailable, "injected: the image download failed")
    }
    return try catalog.firmwareImage(for: image)
  }
}
