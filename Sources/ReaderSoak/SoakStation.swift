import Dispatch
import Foundation
import NFCKit
import ReaderKit
import ReaderSimulator

/// One merchant's counter in a soak: a phone running the app (a `Terminal` and NFC reader sessions) in
/// a simulated Bluetooth world of a few readers, with an NFC radio and tags, an update catalog, and a
/// disk the app's store lives on. The app can be killed and launched again; the world, the disk and
/// the catalog go on.
final class SoakStation: @unchecked Sendable {
  // Confined to the thread that drives the clock.
  let index: Int
  let clock: VirtualClock
  let world: SimulatedBluetoothCentral
  let serials: [String]
  let location: String
  let catalog: InMemoryUpdateCatalog
  let catalogFaults: SoakCatalogFaults
  /// The latest update fault armed on each reader, so that its expiry does not disarm a newer one.
  private var updateFaultArmings: [String: Int] = [:]
  let disk = SoakDisk()
  let storeURL = URL(fileURLWithPath: "/data/readerkit/last-reader.json")
  let nfcRadio: SimulatedNFCRadio
  let tags: [SimulatedNFCTag]
  /// Where the NFC delegates run (one serial queue for the station).
  let nfcQueue: DispatchQueue
  private let seed: UInt64
  private let sabotage: SoakSabotage?
  private let log: SoakLog

  private(set) var bluetoothTruth: BluetoothTruth!
  private(set) var storeTruth: StoreTruth!
  private(set) var nfcTruth: NFCTruth!

  /// The app now running; `nil` while it is down.
  private(set) var app: SoakApp?
  private(set) var nfc: SoakNFCApp?
  private var files: SoakProcessFileSystem?
  /// Launches so far.
  private(set) var generation = 0
  /// The reader the merchant uses (kept across launches).
  private(set) var target: Int
  /// When the app killed by its file system comes back.
  private var relaunchDelay = Duration.seconds(5)
  /// Earlier launches' NFC apps: their sessions may still be called, and must be heard.
  private var retired: [SoakNFCApp] = []
  /// The run is winding down: no new initiatives.
  private(set) var winding = false
  private var halted = false
  private(set) var kills = 0
  /// Terminal and NFC events and faults so far, and what the checks last saw of it and of the world.
  private var activity = 0
  private var checked = (activity: -1, world: -1)
  /// Times the checks must run at although nothing may change then.
  private var probes: [Duration] = []

  init(
    index: Int, clock: VirtualClock, seed: UInt64, readers: Int, days: Int, log: SoakLog, violations: SoakViolations,
    sabotage: SoakSabotage?
  ) {
    self.index = index
    self.clock = clock
    self.seed = seed
    self.sabotage = sabotage
    self.log = log
    world = SimulatedBluetoothCentral(clock: clock, seed: seed)
    let fleet = SimulatedFleet.readers(count: max(1, readers), seed: seed)
    for reader in fleet { world.add(reader) }
    serials = fleet.map(\.serialNumber)
    location = "tml_soak_\(index)"
    catalogFaults = SoakCatalogFaults(clock: clock)
    catalog = SoakCatalog.make(seed: seed, deviceTypes: Set(fleet.map(\.deviceType)), days: days)
    var random = SeededRandom(seed: seed ^ 0x57A7_1011)
    target = Int(random.next() % UInt64(serials.count))
    // Every other phone is fast: a tag is detected at the very instant polling starts or it arrives, so
    // faults and detections fall on the same instant.
    let timing =
      index % 2 == 0
      ? SimulatedNFCRadio.Timing()
      : SimulatedNFCRadio.Timing(
        pollingStart: .zero, detection: .zero, command: .milliseconds(5), perByte: .microseconds(20))
    let limit: Duration = random.next() % 2 == 0 ? .seconds(60) : .seconds(20)
    nfcRadio = SimulatedNFCRadio(
      clock: clock, seed: seed, policy: NFCSystemPolicy(sessionTimeout: limit), timing: timing)
    tags = SoakCatalog.tags
    for tag in tags { nfcRadio.add(tag) }
    nfcQueue = DispatchQueue(label: "ReaderSoak.nfc.\(index)")
    bluetoothTruth = BluetoothTruth(station: self, violations: violations)
    storeTruth = StoreTruth(station: self, violations: violations)
    nfcTruth = NFCTruth(station: self, violations: violations)
  }

  /// The reader the merchant uses now.
  var currentSerial: String? { serials[target] }

  // MARK: The app's life

  /// Launches the app: a new process, terminal, store and NFC system over the same world and disk.
  func launch() {
    generation += 1
    let process = SoakProcess(world: world, generation: generation, sabotage: sabotage)
    let files = SoakProcessFileSystem(disk: disk, process: process)
    files.onDeath = { [self] in clock.execute { [self] in died(process) } }
    let launchSeed = seed ^ UInt64(generation) &* 0x2545_F491_4F6C_DD1D
    let terminal = Terminal(
      central: process, readerLink: process, scheduler: clock,
      store: FileReaderStore(fileURL: storeURL, fileSystem: files), seed: launchSeed, delegateExecutor: .scheduler,
      updateCatalog: SoakProcessCatalog(catalog: catalog, faults: catalogFaults, process: process))
    let app = SoakApp(station: self, process: process, terminal: terminal, target: target, seed: launchSeed ^ 1)
    terminal.addEventObserver { [self] event in
      guard process.isAlive else { return }
      observe(event, app: app)
    }
    self.app = app
    self.files = files
    storeTruth.instant(force: true)
    nfcTruth.launched(generation: generation)
    let nfc = SoakNFCApp(station: self, process: process, seed: launchSeed ^ 2)
    nfc.system.addEventObserver { [self] event in
      touch()
      log.nfcEvent(event, station: index)
    }
    if let old = self.nfc { retired.append(old) }
    self.nfc = nfc
    log.note(index, "launch \(generation)")
    app.winding = winding
    nfc.winding = winding
    app.launch()
    nfc.start()
  }

  private func observe(_ event: TerminalEvent, app: SoakApp) {
    touch()
    log.terminalEvent(event, station: index)
    bluetoothTruth.event(event, autoReconnect: app.pendingAutoReconnect)
    storeTruth.event(event)
    if case .didConnect(let reader) = event.kind, let found = serials.firstIndex(of: reader.serialNumber) {
      target = found
    }
  }

  /// The app dies now (killed, or the phone lost power) and comes back after `relaunchAfter`.
  func kill(relaunchAfter delay: Duration, powerLoss: Bool) {
    guard let app else { return }
    relaunchDelay = delay
    app.process.die()
    died(app.process, powerLoss: powerLoss)
  }

  /// Everything that follows the death of `process`: links dropped, sessions ended, descriptors gone.
  private func died(_ process: SoakProcess, powerLoss: Bool = false) {
    guard let app, app.process === process else { return }
    kills += 1
    log.note(index, powerLoss ? "power loss" : "app killed")
    target = app.target
    self.app = nil
    files = nil
    world.terminateHostApp()
    nfcRadio.terminateSessions()
    disk.releaseDescriptors()
    if powerLoss { disk.powerLoss() }
    bluetoothTruth.appDied()
    storeTruth.instant(force: true)
    clock.schedule(after: relaunchDelay) { [self] in
      guard self.app == nil, !halted else { return }
      launch()
    }
  }

  /// A person switches the reader on (charging it first if its battery is flat), as a merchant does
  /// before connecting a reader that went dark.
  func switchOnIfOff(_ reader: Int) {
    let serial = serials[reader]
    guard let truth = world.truth(serial), !truth.isPoweredOn, let state = world.reader(serial) else { return }
    if state.batteryLevel <= 0.2 { world.setBattery(serial, level: 0.6, isCharging: true) }
    world.setPower(serial, on: true)
  }

  /// A person puts the reader on its charger.
  func putOnCharger(_ serial: String) {
    guard let reader = world.reader(serial) else { return }
    world.setBattery(serial, level: reader.batteryLevel, isCharging: true)
  }

  /// Stops everything the apps drive, for good (a runaway run): the app dies and is not launched again.
  func halt() {
    halted = true
    winding = true
    app?.process.die()
    nfc?.process.die()
  }

  /// The run is over: no new initiatives; what runs may finish.
  func windDown() {
    winding = true
    app?.winding = true
    nfc?.winding = true
  }

  /// Makes sure the checks run at `time` (a no-op item on the clock), even if nothing changes then.
  func probe(at time: Duration) {
    let delay = time - clock.elapsed
    guard delay > .zero else { return }
    clock.schedule(after: delay) {}
    probes.append(time)
  }

  /// Something the app did or heard: the checks of the instant must run.
  func touch() { activity &+= 1 }

  // MARK: States

  /// Where the Bluetooth side stands now.
  var bluetoothState: SoakState {
    guard let app else { return .appDown }
    if app.launching { return .launchReconnect }
    if bluetoothTruth.isInstalling { return .installing }
    let status = app.terminal.connectionStatus
    if bluetoothTruth.isInRebootWindow(status: status) { return .rebootWindow }
    switch status {
    case .connecting: return .connecting
    case .connected: return .connected
    case .reconnecting: return .reconnecting
    case .notConnected, .discovering: return .idle
    }
  }

  /// Where the NFC side stands now.
  var nfcState: SoakState { nfc == nil ? .nfcIdle : nfcTruth.state }

  // MARK: Faults

  /// Does `action` to the station now.
  func apply(_ action: SoakAction) {
    touch()
    let serial = serials[(action.target ?? target) % serials.count]
    let duration = action.duration
    switch action.kind {
    case .walkAway:
      world.walkAway(serial, for: duration)
    case .powerCycle:
      world.setPower(serial, on: false)
      clock.schedule(after: duration) { [world] in world.setPower(serial, on: true) }
    case .hostRadioOff:
      world.setRadio(on: false)
      clock.schedule(after: duration) { [world] in world.setRadio(on: true) }
    case .batteryDrain:
      guard let reader = world.reader(serial) else { return }
      world.setBattery(serial, level: reader.batteryLevel, isCharging: false)
      world.drainBattery(serial, to: action.amount, over: duration)
      // A person puts it back on its charger a while after it ran down.
      clock.schedule(after: duration + duration / 2 + .seconds(60)) { [world] in
        world.setBattery(serial, level: 0.9, isCharging: true)
        world.setPower(serial, on: true)
      }
    case .securityReboot:
      world.forceSecurityReboot(serial)
    case .linkLoss:
      world.dropLink(serial)
    case .updateFails:
      world.failNextUpdate(serial, atProgress: action.amount)
      disarmUpdateFaultLater(serial)
    case .updateDropsLink:
      world.dropLinkDuringNextUpdate(serial, atProgress: action.amount)
      disarmUpdateFaultLater(serial)
    case .catalogFails:
      catalogFaults.checkFailsUntil = clock.elapsed + SoakCatalogFaults.window
    case .imageFails:
      catalogFaults.imageFailsUntil = clock.elapsed + SoakCatalogFaults.window
    case .appKill:
      kill(relaunchAfter: duration, powerLoss: false)
    case .powerLoss:
      kill(relaunchAfter: duration, powerLoss: true)
    case .killDuringSave:
      relaunchDelay = duration
      files?.callsBeforeDeath = max(1, Int(action.amount))
    case .reboot, .disconnect, .installUpdate, .cancelInstall, .cancelReconnect, .cancelConnect, .switchReader:
      app?.command(action)
    case .tagFlicker:
      nfcRadio.present(tags[(action.target ?? 0) % tags.count].name, for: duration)
    case .tagRemovedMidRead:
      nfcRadio.interruptNextTagCommand()
    case .nfcBusy:
      nfcRadio.holdByAnotherApp(for: duration)
    case .nfcTermination:
      nfcRadio.terminateSessions()
    case .nfcRadioOff:
      nfcRadio.switchRadioOff(for: duration)
    case .userCancel:
      nfcRadio.tapCancel()
    case .nfcLimitChange:
      let previous = nfcRadio.policy.sessionTimeout
      let now = previous == .seconds(20) ? Duration.seconds(60) : .seconds(20)
      nfcRadio.setPolicy(NFCSystemPolicy(sessionTimeout: now, whenBusy: nfcRadio.policy.whenBusy))
      nfcTruth.limitChanged(from: previous)
    case .tagRace:
      nfcRadio.present(tags[(action.target ?? 0) % tags.count].name, for: duration)
      switch Int(action.amount) {
      case 0: nfcRadio.tapCancel()
      case 1: nfc?.invalidateRunning()
      default: nfcRadio.terminateSessions()
      }
    case .nfcBurst, .nfcInvalidate:
      nfc?.command(action)
    }
  }

  /// An update fault armed on a reader concerns an install within half an hour; after that it is
  /// replaced by one at a progress no install reaches.
  private func disarmUpdateFaultLater(_ serial: String) {
    let arming = updateFaultArmings[serial, default: 0] + 1
    updateFaultArmings[serial] = arming
    clock.schedule(after: .seconds(1800)) { [self] in
      guard updateFaultArmings[serial] == arming else { return }
      world.failNextUpdate(serial, atProgress: 2)
    }
  }

  // MARK: Checks

  /// The checks of the end of an instant. The Bluetooth side's run only when something happened on the
  /// station (an event, a fault, a change in its world) or a check asked for this time: otherwise none
  /// of what they compare can have changed. Returns whether they ran.
  @discardableResult
  func instant(_ now: Duration) -> Bool {
    storeTruth.instant()
    nfcTruth.instant(now)
    let world = self.world.changeCount
    let due = probes.contains { $0 <= now }
    guard due || checked.activity != activity || checked.world != world else { return false }
    if due { probes.removeAll { $0 <= now } }
    checked = (activity, world)
    if let app { bluetoothTruth.instant(now, terminal: app.terminal) }
    return true
  }

  /// The checks of the end of the run.
  func finish(_ now: Duration, violations: SoakViolations) {
    bluetoothTruth.finish(now)
    if let app {
      let (missing, repeated) = app.unbalancedCompletions
      if !missing.isEmpty {
        violations.record(now, index, .completion, "completions never ran for commands \(missing.prefix(8))")
      }
      if !repeated.isEmpty {
        violations.record(now, index, .completion, "completions ran twice for commands \(repeated.prefix(8))")
      }
    }
  }
}
