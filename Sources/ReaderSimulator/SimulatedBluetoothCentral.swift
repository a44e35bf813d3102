import Foundation
import ReaderCore
import Synchronization

/// A seeded, virtual Bluetooth world: the host's radio and the readers around it.
///
/// It implements `BluetoothCentral` for the terminal and offers script controls (move a reader out
/// of range, switch it off, drain its battery, turn the host's radio off, force a security reboot,
/// terminate the host app) for tests, the CLI demo and apps' own tests; `SimulatedFaultSchedule`
/// drives them from a script or a seed. Everything runs on the `VirtualClock` it is given, and all
/// randomness (signal noise, advertising jitter) comes from its seed, so the same seed and script
/// give the same events.
///
/// Behaviour worth knowing:
/// - A reader advertises about once every `advertisingInterval` (a second by default) while a scan
///   runs, it is switched on, in range, not rebooting and not connected.
/// - A connect to a reader that cannot be reached stays pending (as on real hardware) until the
///   reader becomes reachable or the terminal abandons it.
/// - M2 and WisePad 3 reboot themselves 24 hours after they last started (`securityReboot`);
///   `reboot` restarts that count. A reader not on external power and left without host activity
///   (connect, reboot) for 10 hours switches itself off (`idlePowerDown`); a battery at or below 5 %
///   switches it off too (`criticallyLowBattery`). A reader that is off runs neither count; both
///   start over when it is switched on, so a world whose readers are all off leaves no work on the
///   clock.
public final class SimulatedBluetoothCentral: BluetoothCentral, ReaderLink, Sendable {
  /// Something that happened in the world, for narration and assertions.
  public struct WorldEvent: Sendable, Hashable, CustomStringConvertible {
    /// When it happened (virtual time since the clock's start).
    public var time: Duration
    /// The reader concerned, if any.
    public var serialNumber: String?
    /// What happened, e.g. `"flashedLEDs"`, `"outOfRange"`, `"securityReboot"`.
    public var kind: String

    public var description: String { "\(time) \(serialNumber ?? "host") \(kind)" }
  }

  /// How long a reader may stay idle on battery before it switches itself off.
  public static let idlePowerDownInterval = Duration.seconds(10 * 3600)
  /// How long M2 and WisePad 3 run before their security reboot.
  public static let securityRebootInterval = Duration.seconds(24 * 3600)
  /// The mean interval between two advertisements of one reader, unless the world is given another.
  public static let defaultAdvertisingInterval = Duration.seconds(1)

  /// The mean interval between two advertisements of one reader in this world.
  public let advertisingInterval: Duration

  /// What the world tells the terminal: the radio's events, and the readers' over their links.
  private enum Output {
    case radio(BluetoothEvent)
    case link(ReaderLinkEvent)

    static func radioStateChanged(isPoweredOn: Bool) -> Output { .radio(.radioStateChanged(isPoweredOn: isPoweredOn)) }
    static func advertisement(_ advertisement: Advertisement) -> Output { .radio(.advertisement(advertisement)) }
    static func didConnect(serialNumber: String, info: ReaderInfo) -> Output {
      .radio(.didConnect(serialNumber: serialNumber, info: info))
    }
    static func didFailToConnect(serialNumber: String, error: ReaderError) -> Output {
      .radio(.didFailToConnect(serialNumber: serialNumber, error: error))
    }
    static func didDisconnect(serialNumber: String, reason: DisconnectReason) -> Output {
      .radio(.didDisconnect(serialNumber: serialNumber, reason: reason))
    }
    static func batteryDidChange(serialNumber: String, level: Double, isCharging: Bool) -> Output {
      .link(.batteryDidChange(serialNumber: serialNumber, level: level, isCharging: isCharging))
    }
    static func rebootResponse(serialNumber: String, error: ReaderError?) -> Output {
      .link(.rebootResponse(serialNumber: serialNumber, error: error))
    }
    static func updateProgress(serialNumber: String, progress: Double) -> Output {
      .link(.updateProgress(serialNumber: serialNumber, progress: progress))
    }
    static func updateFinished(serialNumber: String, error: ReaderError?) -> Output {
      .link(.updateFinished(serialNumber: serialNumber, error: error))
    }
  }

  private struct Entry {
    var reader: SimulatedReader
    var advertising: ScheduledWork?
    var rebootingUntil: Duration?
    var securityReboot: ScheduledWork?
    var idleTimer: ScheduledWork?
    var pendingConnect = false
    var connectCompletion: ScheduledWork?
    var linked = false
    var ledFlashes = 0
    var connectRequests = 0
    /// The update being installed, if any.
    var install: Install?
    /// A fault scripted for the next install.
    var nextUpdateFault: UpdateFault?

    /// Whether the host can reach the reader, with the host's radio on or off.
    func isReachable(radioOn: Bool) -> Bool {
      radioOn && reader.isPoweredOn && reader.isInRange && rebootingUntil == nil
    }

    /// Its advertising timer fired: the timer is cleared, and the advertisement it sends now if it can
    /// (scanning, reachable, no link), with signal noise drawn from `random`. Mutating, so that it runs in
    /// place in the world's table rather than on a copy.
    mutating func advertisingTimerFired(scanning: Bool, radioOn: Bool, random: inout SeededRandom) -> Advertisement? {
      advertising = nil
      guard scanning, isReachable(radioOn: radioOn), !linked else { return nil }
      let noise = Int(random.next() % 7) - 3
      return Advertisement(
        serialNumber: reader.serialNumber, deviceType: reader.deviceType,
        signalStrength: reader.meanSignalStrength + noise, info: reader.info)
    }
  }

  /// An update a reader is installing: the image is kept aside until the last step, so a reader that
  /// loses its link or stops keeps its previous version whole.
  private struct Install {
    var update: ReaderSoftwareUpdate
    var image: Data?
    var fault: UpdateFault?
    var step = 0
    var work: ScheduledWork?
  }

  private struct World {
    var entries: [String: Entry] = [:]
    var order: [String] = []
    var radioOn = true
    var scanning = false
    var handler: (@Sendable (BluetoothEvent) -> Void)?
    var linkHandler: (@Sendable (ReaderLinkEvent) -> Void)?
    var random: SeededRandom
    var log: [WorldEvent] = []
  }

  /// The clock the world runs on; the terminal must use the same one.
  public let clock: VirtualClock
  private let world: Mutex<World>

  /// Creates an empty world on `clock`, with randomness from `seed`, whose readers advertise about
  /// once every `advertisingInterval` while a scan runs.
  public init(clock: VirtualClock, seed: UInt64, advertisingInterval: Duration = defaultAdvertisingInterval) {
    self.clock = clock
    self.advertisingInterval = max(advertisingInterval, .microseconds(1))
    self.world = Mutex(World(random: SeededRandom(seed: seed)))
  }

  // MARK: Script controls

  /// Adds a reader to the world; it starts its 24-hour and idle timers now.
  public func add(_ reader: SimulatedReader) {
    mutate { world in
      world.entries[reader.serialNumber] = Entry(reader: reader)
      world.order.append(reader.serialNumber)
      if reader.isPoweredOn { self.started(reader.serialNumber, in: &world) }
      return []
    }
  }

  /// The readers in the world, in the order they were added.
  public var readers: [SimulatedReader] {
    world.withLock { world in world.order.compactMap { world.entries[$0]?.reader } }
  }

  /// The reader with `serialNumber`, if it exists.
  public func reader(_ serialNumber: String) -> SimulatedReader? {
    world.withLock { $0.entries[serialNumber]?.reader }
  }

  /// How many times the reader was asked to flash its LEDs.
  public func ledFlashCount(_ serialNumber: String) -> Int {
    world.withLock { $0.entries[serialNumber]?.ledFlashes ?? 0 }
  }

  /// How many times the host asked to connect to the reader — every reconnection attempt counts,
  /// including a request refused at once because the host's radio was off.
  public func connectRequestCount(_ serialNumber: String) -> Int {
    world.withLock { $0.entries[serialNumber]?.connectRequests ?? 0 }
  }

  /// Whether the host's radio is scanning.
  public var isScanning: Bool { world.withLock { $0.scanning } }

  /// Everything that happened so far.
  public var worldEvents: [WorldEvent] { world.withLock { $0.log } }

  /// Moves a reader into or out of range. Leaving range drops its link (`bluetoothSignalLost`).
  public func setInRange(_ serialNumber: String, _ inRange: Bool) {
    mutate { world in
      guard var entry = world.entries[serialNumber], entry.reader.isInRange != inRange else { return [] }
      entry.reader.isInRange = inRange
      world.entries[serialNumber] = entry
      self.record(serialNumber, inRange ? "backInRange" : "outOfRange", in: &world)
      return inRange
        ? self.becameReachable(serialNumber, in: &world)
        : self.unreachable(serialNumber, .bluetoothSignalLost, in: &world)
    }
  }

  /// Takes a reader out of range now and brings it back after `duration`.
  public func walkAway(_ serialNumber: String, for duration: Duration) {
    setInRange(serialNumber, false)
    clock.schedule(after: duration) { [self] in setInRange(serialNumber, true) }
  }

  /// Moves a reader (changes its signal strength).
  public func setDistance(_ serialNumber: String, _ metres: Double) {
    mutate { world in
      world.entries[serialNumber]?.reader.distance = metres
      return []
    }
  }

  /// Switches a reader on or off. Off drops its link (`poweredOff`) and stops its clocks (the
  /// 24-hour and idle counts start over when it is switched on).
  public func setPower(_ serialNumber: String, on: Bool) {
    mutate { world in
      guard let entry = world.entries[serialNumber], entry.reader.isPoweredOn != on else { return [] }
      self.record(serialNumber, on ? "poweredOn" : "poweredOff", in: &world)
      guard on else { return self.switchOff(serialNumber, .poweredOff, in: &world) }
      world.entries[serialNumber]?.reader.isPoweredOn = true
      self.started(serialNumber, in: &world)
      return self.becameReachable(serialNumber, in: &world)
    }
  }

  /// Makes an M2 or WisePad 3 perform its security reboot now, as if its 24 hours were up; the
  /// count starts over when it is back. A Chipper 2X, or a reader that is off or rebooting, ignores it.
  public func forceSecurityReboot(_ serialNumber: String) {
    mutate { world in
      guard let entry = world.entries[serialNumber], entry.reader.deviceType.hasSecurityReboot else { return [] }
      if let work = entry.securityReboot { self.clock.cancel(work) }
      world.entries[serialNumber]?.securityReboot = nil
      return self.rebootNow(serialNumber, reason: .securityReboot, in: &world)
    }
  }

  /// The battery level below which a reader not on external power refuses to install an update.
  public static let minimumUpdateBattery = 0.5
  /// How many progress reports a reader sends while installing an update.
  public static let updateSteps = 50

  /// How long a simulated reader takes to install an update with `estimate`: 20 s under a minute,
  /// 60 s for one to two minutes (a full update, as the anchor SDK's simulated required update),
  /// 150 s for two to five, 400 s for five to fifteen.
  public static func installDuration(_ estimate: UpdateTimeEstimate) -> Duration {
    switch estimate {
    case .estimateLessThan1Minute: .seconds(20)
    case .estimate1To2Minutes: .seconds(60)
    case .estimate2To5Minutes: .seconds(150)
    case .estimate5To15Minutes: .seconds(400)
    }
  }

  /// Sets a reader's installed software, e.g. back to an old version so it needs an update again.
  public func setSoftwareVersion(_ serialNumber: String, _ version: String) {
    mutate { world in
      world.entries[serialNumber]?.reader.softwareVersion = version
      self.record(serialNumber, "softwareVersionSet", in: &world)
      return []
    }
  }

  /// Makes the reader's next update install fail with a reader error once it reaches `progress`.
  public func failNextUpdate(_ serialNumber: String, atProgress progress: Double) {
    mutate { world in
      world.entries[serialNumber]?.nextUpdateFault = .fail(atProgress: progress)
      return []
    }
  }

  /// Makes the reader drop its link during its next update install once it reaches `progress`.
  public func dropLinkDuringNextUpdate(_ serialNumber: String, atProgress progress: Double) {
    mutate { world in
      world.entries[serialNumber]?.nextUpdateFault = .dropLink(atProgress: progress)
      return []
    }
  }

  /// Whether the reader is installing an update right now.
  public func isInstallingUpdate(_ serialNumber: String) -> Bool {
    world.withLock { $0.entries[serialNumber]?.install != nil }
  }

  /// How many things have happened in the world so far (`worldEvents.count`, without the copy): every
  /// change of a link, of a reader's reachability or of its version is one, so an unchanged count
  /// means none of them changed.
  public var changeCount: Int { world.withLock { $0.log.count } }

  /// The reader's state at this instant as the world knows it (link, reachability, reboot, version,
  /// install), for checks against the ground truth; `nil` for a reader the world does not have.
  public func truth(_ serialNumber: String) -> SimulatedReaderTruth? {
    world.withLock { world in
      guard let entry = world.entries[serialNumber] else { return nil }
      return SimulatedReaderTruth(
        isLinked: entry.linked, isReachable: entry.isReachable(radioOn: world.radioOn),
        isRebooting: entry.rebootingUntil != nil, isPoweredOn: entry.reader.isPoweredOn,
        softwareVersion: entry.reader.softwareVersion,
        installProgress: entry.install.map { Double($0.step) / Double(Self.updateSteps) })
    }
  }

  /// Drops a connected reader's link for no reason the reader reports (`unknown`: interference, a
  /// firmware fault). The reader stays on and in range, so it can be connected again at once. A
  /// reader without a link ignores it.
  public func dropLink(_ serialNumber: String) {
    mutate { world in
      guard world.entries[serialNumber]?.linked == true else { return [] }
      self.record(serialNumber, "linkLost", in: &world)
      return self.unreachable(serialNumber, .unknown, in: &world) + self.becameReachable(serialNumber, in: &world)
    }
  }

  /// Sets a reader's battery; a connected reader reports it, and at or below 5 % without external
  /// power the reader shuts down (`criticallyLowBattery`).
  public func setBattery(_ serialNumber: String, level: Double, isCharging: Bool? = nil) {
    mutate { world in
      guard var entry = world.entries[serialNumber] else { return [] }
      entry.reader.batteryLevel = min(max(level, 0), 1)
      if let isCharging { entry.reader.isCharging = isCharging }
      world.entries[serialNumber] = entry
      var events: [Output] = []
      if entry.linked {
        events.append(
          .batteryDidChange(
            serialNumber: serialNumber, level: entry.reader.batteryLevel, isCharging: entry.reader.isCharging))
      }
      if entry.reader.batteryLevel <= BatteryStatus.criticalThreshold && !entry.reader.isCharging
        && entry.reader.isPoweredOn
      {
        self.record(serialNumber, "criticalBatteryShutdown", in: &world)
        events += self.switchOff(serialNumber, .criticallyLowBattery, in: &world)
      }
      return events
    }
  }

  /// Drains a reader's battery linearly to `level` over `duration`, one step a minute.
  public func drainBattery(_ serialNumber: String, to level: Double, over duration: Duration) {
    guard let start = reader(serialNumber)?.batteryLevel else { return }
    let steps = max(1, Int(duration / .seconds(60)))
    for step in 1...steps {
      let value = start + (level - start) * Double(step) / Double(steps)
      clock.schedule(after: duration * (Double(step) / Double(steps))) { [self] in
        setBattery(serialNumber, level: value)
      }
    }
  }

  /// Turns the host's Bluetooth radio on or off. Off drops every link (`bluetoothDisabled`).
  public func setRadio(on: Bool) {
    mutate { world in
      guard world.radioOn != on else { return [] }
      world.radioOn = on
      self.record(nil, on ? "radioOn" : "radioOff", in: &world)
      var events: [Output] = [.radioStateChanged(isPoweredOn: on)]
      for serial in world.order {
        if on {
          events += self.becameReachable(serial, in: &world)
        } else {
          events += self.unreachable(serial, .bluetoothDisabled, in: &world)
        }
      }
      return events
    }
  }

  /// Simulates the host app being terminated (or crashing): every link and pending connection is
  /// dropped without an event, the scan stops and the event handler is removed. The readers notice
  /// the lost link and advertise again, so a new `Terminal` created over the same world — a second
  /// launch — can find them (see `Terminal.reconnectToSavedReader`).
  public func terminateHostApp() {
    mutate { world in
      self.record(nil, "hostAppTerminated", in: &world)
      world.handler = nil
      world.linkHandler = nil
      world.scanning = false
      for serial in world.order {
        guard var entry = world.entries[serial] else { continue }
        if let work = entry.advertising { self.clock.cancel(work) }
        if let work = entry.connectCompletion { self.clock.cancel(work) }
        entry.advertising = nil
        entry.connectCompletion = nil
        entry.pendingConnect = false
        entry.linked = false
        world.entries[serial] = entry
        self.interruptInstall(serial, in: &world)
      }
      return []
    }
  }

  // MARK: BluetoothCentral and ReaderLink

  public func setEventHandler(_ handler: @escaping @Sendable (BluetoothEvent) -> Void) {
    world.withLock { $0.handler = handler }
  }

  public func setLinkEventHandler(_ handler: @escaping @Sendable (ReaderLinkEvent) -> Void) {
    world.withLock { $0.linkHandler = handler }
  }

  public var isPoweredOn: Bool { world.withLock { $0.radioOn } }

  public func startScan() {
    mutate { world in
      guard !world.scanning else { return [] }
      world.scanning = true
      for serial in world.order { self.scheduleAdvertisement(serial, in: &world, first: true) }
      return []
    }
  }

  public func stopScan() {
    mutate { world in
      world.scanning = false
      for serial in world.order {
        if let work = world.entries[serial]?.advertising { self.clock.cancel(work) }
        world.entries[serial]?.advertising = nil
      }
      return []
    }
  }

  public func connect(serialNumber: String) {
    mutate { world in
      world.entries[serialNumber]?.connectRequests += 1
      guard world.radioOn else {
        return [
          .didFailToConnect(serialNumber: serialNumber, error: ReaderError(.bluetoothDisabled, "Bluetooth is off"))
        ]
      }
      guard world.entries[serialNumber] != nil else {
        return [
          .didFailToConnect(
            serialNumber: serialNumber,
            error: ReaderError(.readerNotFound, "no such reader", context: ["serialNumber": serialNumber]))
        ]
      }
      world.entries[serialNumber]?.pendingConnect = true
      self.activity(serialNumber, in: &world)
      return self.becameReachable(serialNumber, in: &world)
    }
  }

  public func cancelConnect(serialNumber: String) {
    mutate { world in
      guard var entry = world.entries[serialNumber] else { return [] }
      entry.pendingConnect = false
      if let work = entry.connectCompletion { self.clock.cancel(work) }
      entry.connectCompletion = nil
      let wasLinked = entry.linked
      entry.linked = false
      world.entries[serialNumber] = entry
      if wasLinked {
        // The host let go of a live link: the reader notices and advertises again.
        self.interruptInstall(serialNumber, in: &world)
        self.record(serialNumber, "linkAbandoned", in: &world)
        self.scheduleAdvertisement(serialNumber, in: &world, first: true)
      }
      return []
    }
  }

  public func disconnect(serialNumber: String) {
    clock.schedule(after: .milliseconds(100)) { [self] in
      mutate { world in
        guard world.entries[serialNumber]?.linked == true else { return [] }
        world.entries[serialNumber]?.linked = false
        self.interruptInstall(serialNumber, in: &world)
        self.record(serialNumber, "disconnected", in: &world)
        self.scheduleAdvertisement(serialNumber, in: &world, first: true)
        return [.didDisconnect(serialNumber: serialNumber, reason: .disconnectRequested)]
      }
    }
  }

  public func flashLEDs(serialNumber: String) {
    mutate { world in
      world.entries[serialNumber]?.ledFlashes += 1
      self.record(serialNumber, "flashedLEDs", in: &world)
      return []
    }
  }

  public func reboot(serialNumber: String) {
    clock.schedule(after: .milliseconds(300)) { [self] in
      mutate { world in
        guard world.entries[serialNumber]?.linked == true else {
          return [.rebootResponse(serialNumber: serialNumber, error: ReaderError(.notConnected, "not connected"))]
        }
        self.activity(serialNumber, in: &world)
        self.clock.schedule(after: .milliseconds(200)) { [self] in
          mutate { world in self.rebootNow(serialNumber, reason: .rebootRequested, in: &world) }
        }
        return [.rebootResponse(serialNumber: serialNumber, error: nil)]
      }
    }
  }

  public func installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?, fault: UpdateFault?) {
    mutate { world in
      guard var entry = world.entries[serialNumber], entry.linked, entry.install == nil else { return [] }
      self.activity(serialNumber, in: &world)
      let planned = fault ?? entry.nextUpdateFault
      entry.nextUpdateFault = nil
      let lowBattery = entry.reader.batteryLevel < Self.minimumUpdateBattery && !entry.reader.isCharging
      if planned == .lowBattery || lowBattery {
        world.entries[serialNumber] = entry
        self.record(serialNumber, "updateRefusedLowBattery", in: &world)
        let level = entry.reader.batteryLevel
        return [
          .updateFinished(
            serialNumber: serialNumber,
            error: ReaderError(
              .readerSoftwareUpdateFailedBatteryLow, "the reader's battery is too low to install the update; charge it",
              context: ["batteryLevel": "\(Int((level * 100).rounded())) %"]))
        ]
      }
      entry.install = Install(update: update, image: image, fault: planned)
      world.entries[serialNumber] = entry
      self.record(serialNumber, "updateStarted", in: &world)
      self.scheduleInstallStep(serialNumber, in: &world)
      return []
    }
  }

  public func cancelUpdate(serialNumber: String) {
    mutate { world in
      guard let install = world.entries[serialNumber]?.install else { return [] }
      if let work = install.work { self.clock.cancel(work) }
      world.entries[serialNumber]?.install = nil
      self.record(serialNumber, "updateCanceled", in: &world)
      return [.updateFinished(serialNumber: serialNumber, error: ReaderError.canceled("installUpdate"))]
    }
  }

  // MARK: World mechanics (all called with the lock held; events are delivered after it is released)

  private func scheduleInstallStep(_ serialNumber: String, in world: inout World) {
    guard let install = world.entries[serialNumber]?.install else { return }
    let step = Self.installDuration(install.update.durationEstimate) / Self.updateSteps
    world.entries[serialNumber]?.install?.work = clock.schedule(after: step) { [self] in
      mutate { world in self.installStep(serialNumber, in: &world) }
    }
  }

  private func installStep(_ serialNumber: String, in world: inout World) -> [Output] {
    guard var install = world.entries[serialNumber]?.install, world.entries[serialNumber]?.linked == true else {
      return []
    }
    install.step += 1
    install.work = nil
    let progress = Double(install.step) / Double(Self.updateSteps)
    switch install.fault {
    case .fail(let at) where progress >= at:
      world.entries[serialNumber]?.install = nil
      record(serialNumber, "updateFailed", in: &world)
      return [
        .updateFinished(
          serialNumber: serialNumber,
          error: ReaderError(
            .readerSoftwareUpdateFailedReaderError, "the reader could not install the update",
            context: ["progress": "\(Int((progress * 100).rounded())) %"]))
      ]
    case .dropLink(let at) where progress >= at:
      record(serialNumber, "linkLost", in: &world)
      return unreachable(serialNumber, .unknown, in: &world) + becameReachable(serialNumber, in: &world)
    default:
      break
    }
    guard install.step >= Self.updateSteps else {
      world.entries[serialNumber]?.install = install
      scheduleInstallStep(serialNumber, in: &world)
      return [.updateProgress(serialNumber: serialNumber, progress: progress)]
    }
    // The last step: only now does the reader switch to the new version, all at once.
    world.entries[serialNumber]?.install = nil
    world.entries[serialNumber]?.reader.softwareVersion = install.update.deviceSoftwareVersion
    record(serialNumber, "updateInstalled", in: &world)
    return [
      .updateProgress(serialNumber: serialNumber, progress: 1),
      .updateFinished(serialNumber: serialNumber, error: nil),
    ]
  }

  /// The reader lost its link while installing: the install stops and the new version is dropped.
  private func interruptInstall(_ serialNumber: String, in world: inout World) {
    guard let install = world.entries[serialNumber]?.install else { return }
    if let work = install.work { clock.cancel(work) }
    world.entries[serialNumber]?.install = nil
    record(serialNumber, "updateInterrupted", in: &world)
  }

  private func mutate(_ body: (inout World) -> [Output]) {
    let (events, handler, linkHandler) = world.withLock { world in (body(&world), world.handler, world.linkHandler) }
    // Queued, never delivered from inside the caller: the terminal sees one event per work item.
    for event in events {
      switch event {
      case .radio(let event): if let handler { clock.execute { handler(event) } }
      case .link(let event): if let linkHandler { clock.execute { linkHandler(event) } }
      }
    }
  }

  private func record(_ serialNumber: String?, _ kind: String, in world: inout World) {
    world.log.append(WorldEvent(time: clock.elapsed, serialNumber: serialNumber, kind: kind))
  }

  private func isReachable(_ entry: Entry, in world: World) -> Bool {
    entry.isReachable(radioOn: world.radioOn)
  }

  /// The reader switches itself off (or is switched off) for `reason`: its link drops and its timers
  /// stop, so a reader left off leaves no work behind on the clock.
  private func switchOff(_ serialNumber: String, _ reason: DisconnectReason, in world: inout World) -> [Output] {
    guard var entry = world.entries[serialNumber] else { return [] }
    entry.reader.isPoweredOn = false
    for work in [entry.securityReboot, entry.idleTimer].compactMap({ $0 }) { clock.cancel(work) }
    entry.securityReboot = nil
    entry.idleTimer = nil
    world.entries[serialNumber] = entry
    return unreachable(serialNumber, reason, in: &world)
  }

  /// The reader just powered on or finished a reboot: restart its security and idle timers.
  private func started(_ serialNumber: String, in world: inout World) {
    guard var entry = world.entries[serialNumber], entry.reader.isPoweredOn else { return }
    if let work = entry.securityReboot { clock.cancel(work) }
    entry.securityReboot = nil
    if entry.reader.deviceType.hasSecurityReboot {
      entry.securityReboot = clock.schedule(after: Self.securityRebootInterval) { [self] in
        mutate { world in
          world.entries[serialNumber]?.securityReboot = nil
          return self.rebootNow(serialNumber, reason: .securityReboot, in: &world)
        }
      }
    }
    world.entries[serialNumber] = entry
    activity(serialNumber, in: &world)
  }

  /// Host activity: restart the idle power-down count.
  private func activity(_ serialNumber: String, in world: inout World) {
    // A reader that is off counts nothing; it starts counting when it is switched on.
    guard var entry = world.entries[serialNumber], entry.reader.isPoweredOn else { return }
    if let work = entry.idleTimer { clock.cancel(work) }
    entry.idleTimer = clock.schedule(after: Self.idlePowerDownInterval) { [self] in
      mutate { world in
        guard var entry = world.entries[serialNumber], entry.reader.isPoweredOn else { return [] }
        entry.idleTimer = nil
        world.entries[serialNumber] = entry
        if entry.reader.isCharging {
          self.activity(serialNumber, in: &world)
          return []
        }
        self.record(serialNumber, "idlePowerDown", in: &world)
        return self.switchOff(serialNumber, .idlePowerDown, in: &world)
      }
    }
    world.entries[serialNumber] = entry
  }

  private func rebootNow(_ serialNumber: String, reason: DisconnectReason, in world: inout World) -> [Output] {
    guard let entry = world.entries[serialNumber], entry.reader.isPoweredOn, entry.rebootingUntil == nil else {
      return []
    }
    record(serialNumber, reason == .securityReboot ? "securityReboot" : "rebooting", in: &world)
    let events = unreachable(serialNumber, reason, in: &world)
    world.entries[serialNumber]?.rebootingUntil = clock.elapsed + entry.reader.rebootDuration
    clock.schedule(after: entry.reader.rebootDuration) { [self] in
      mutate { world in
        world.entries[serialNumber]?.rebootingUntil = nil
        self.record(serialNumber, "rebooted", in: &world)
        self.started(serialNumber, in: &world)
        return self.becameReachable(serialNumber, in: &world)
      }
    }
    return events
  }

  /// The reader can no longer be reached: drop its link for `reason` and stop its advertising.
  private func unreachable(_ serialNumber: String, _ reason: DisconnectReason, in world: inout World)
    -> [Output]
  {
    guard var entry = world.entries[serialNumber] else { return [] }
    if let work = entry.advertising { clock.cancel(work) }
    entry.advertising = nil
    if let work = entry.connectCompletion { clock.cancel(work) }
    entry.connectCompletion = nil
    var events: [Output] = []
    if entry.linked {
      world.entries[serialNumber] = entry
      interruptInstall(serialNumber, in: &world)
      entry = world.entries[serialNumber] ?? entry
      entry.linked = false
      events.append(.didDisconnect(serialNumber: serialNumber, reason: reason))
    } else if entry.pendingConnect && reason == .bluetoothDisabled {
      entry.pendingConnect = false
      events.append(
        .didFailToConnect(serialNumber: serialNumber, error: ReaderError(.bluetoothDisabled, "Bluetooth is off")))
    }
    world.entries[serialNumber] = entry
    return events
  }

  /// The reader may be reachable again: complete a pending connect, or resume advertising.
  private func becameReachable(_ serialNumber: String, in world: inout World) -> [Output] {
    guard var entry = world.entries[serialNumber], isReachable(entry, in: world), !entry.linked else { return [] }
    if entry.pendingConnect {
      guard entry.connectCompletion == nil else { return [] }
      entry.connectCompletion = clock.schedule(after: entry.reader.connectLatency) { [self] in
        mutate { world in self.completeConnect(serialNumber, in: &world) }
      }
      world.entries[serialNumber] = entry
      return []
    }
    scheduleAdvertisement(serialNumber, in: &world, first: true)
    return []
  }

  private func completeConnect(_ serialNumber: String, in world: inout World) -> [Output] {
    guard var entry = world.entries[serialNumber], entry.pendingConnect else { return [] }
    entry.connectCompletion = nil
    guard isReachable(entry, in: world) else {
      world.entries[serialNumber] = entry
      return []
    }
    entry.pendingConnect = false
    entry.linked = true
    if let work = entry.advertising { clock.cancel(work) }
    entry.advertising = nil
    world.entries[serialNumber] = entry
    record(serialNumber, "connected", in: &world)
    return [.didConnect(serialNumber: serialNumber, info: entry.reader.info)]
  }

  private func scheduleAdvertisement(_ serialNumber: String, in world: inout World, first: Bool) {
    guard world.scanning, let index = world.entries.index(forKey: serialNumber) else { return }
    let entry = world.entries.values[index]
    guard entry.advertising == nil, !entry.linked, isReachable(entry, in: world) else { return }
    armAdvertising(at: index, in: &world, first: first)
  }

  /// Arms the advertising timer of the entry at `index`, which may advertise.
  ///
  /// The advertising loop reaches its entry by index and changes it in place: one lookup of the serial
  /// number per advertisement and no copy of the entry, which counts with thousands of readers at 10 Hz.
  private func armAdvertising(at index: Dictionary<String, Entry>.Index, in world: inout World, first: Bool) {
    let serialNumber = world.entries.keys[index]
    let unit = world.random.nextUnit()
    // The first advertisement comes at a random point of the interval; the rest every 0.8–1.2 intervals.
    let delay = first ? advertisingInterval * unit : advertisingInterval * (0.8 + 0.4 * unit)
    world.entries.values[index].advertising = clock.schedule(after: delay) { [self] in
      mutate { world in self.advertise(serialNumber, in: &world) }
    }
  }

  /// The reader's advertising timer fired: it advertises if it still can, and arms the timer again.
  private func advertise(_ serialNumber: String, in world: inout World) -> [Output] {
    guard let index = world.entries.index(forKey: serialNumber),
      let advertisement = world.entries.values[index].advertisingTimerFired(
        scanning: world.scanning, radioOn: world.radioOn, random: &world.random)
    else { return [] }
    armAdvertising(at: index, in: &world, first: false)
    return [.advertisement(advertisement)]
  }
}
