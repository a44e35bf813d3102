import Foundation
import ReaderCore

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
///
/// Each reader's rules are a pure machine, `SimulatedReaderStateMachine`; this class is their driver:
/// it keeps the world (the host's radio, the scan, the seed, the log), feeds the readers the script's
/// and the host's requests, arms their timers on the clock and delivers their events.
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
  public static let idlePowerDownInterval = SimulatedReaderStateMachine.idlePowerDownInterval
  /// How long M2 and WisePad 3 run before their security reboot.
  public static let securityRebootInterval = SimulatedReaderStateMachine.securityRebootInterval
  /// The mean interval between two advertisements of one reader, unless the world is given another.
  public static let defaultAdvertisingInterval = Duration.seconds(1)

  /// The mean interval between two advertisements of one reader in this world.
  public let advertisingInterval: Duration
  /// `advertisingInterval`, ready to be scaled at every advertisement.
  private let interval: SimulatedReaderStateMachine.Interval

  /// The clock the world runs on; the terminal must use the same one.
  public let clock: VirtualClock
  /// The world's state, and what its readers' advertising work reaches.
  private let core: Core

  /// Creates an empty world on `clock`, with randomness from `seed`, whose readers advertise about
  /// once every `advertisingInterval` while a scan runs; `worldEvents` keeps the latest `logCapacity`
  /// events (at least one), so a world that runs for days stops growing.
  public init(
    clock: VirtualClock, seed: UInt64, advertisingInterval: Duration = defaultAdvertisingInterval,
    logCapacity: Int = defaultLogCapacity
  ) {
    self.clock = clock
    self.advertisingInterval = max(advertisingInterval, .microseconds(1))
    interval = SimulatedReaderStateMachine.Interval(self.advertisingInterval)
    core = Core(
      clock: clock, interval: interval,
      world: World(random: SeededRandom(seed: seed), log: RecentLog(capacity: logCapacity)))
  }

  /// How many of the latest events `worldEvents` keeps unless told.
  public static let defaultLogCapacity = 10_000

  /// The advertising work each reader keeps holds the world's core, which holds it: the cycle is broken here,
  /// and the work still on the clock is dropped, so neither the core nor the clock outlives the world.
  deinit {
    let pending = core.world.withLock { world in
      defer { world.entries.removeAll() }
      return world.entries.slots.compactMap(\.advertising)
    }
    for work in pending { clock.cancel(work) }
  }

  // MARK: Script controls

  /// Adds a reader to the world; it starts its 24-hour and idle timers now.
  public func add(_ reader: SimulatedReader) {
    mutate { world in
      let slot = world.entries.slot(of: reader.serialNumber) ?? world.entries.slots.count
      let core = self.core
      world.entries[reader.serialNumber] = Entry(reader: reader) { core.advertise(at: slot) }
      world.order.append(reader.serialNumber)
      return self.step(reader.serialNumber, in: &world) { machine, _, _ in machine.added() }
    }
  }

  /// The readers in the world, in the order they were added.
  public var readers: [SimulatedReader] {
    core.world.withLock { world in world.order.compactMap { world.entries[$0]?.machine.reader } }
  }

  /// The reader with `serialNumber`, if it exists.
  public func reader(_ serialNumber: String) -> SimulatedReader? {
    core.world.withLock { $0.entries[serialNumber]?.machine.reader }
  }

  /// How many times the reader was asked to flash its LEDs.
  public func ledFlashCount(_ serialNumber: String) -> Int {
    core.world.withLock { $0.entries[serialNumber]?.machine.ledFlashes ?? 0 }
  }

  /// How many times the host asked to connect to the reader — every reconnection attempt counts,
  /// including a request refused at once because the host's radio was off.
  public func connectRequestCount(_ serialNumber: String) -> Int {
    core.world.withLock { $0.entries[serialNumber]?.machine.connectRequests ?? 0 }
  }

  /// Whether the host's radio is scanning.
  public var isScanning: Bool { core.world.withLock { $0.scanning } }

  /// What happened so far, oldest first: the latest `logCapacity` events.
  public var worldEvents: [WorldEvent] { core.world.withLock { $0.log.entries } }

  /// Moves a reader into or out of range. Leaving range drops its link (`bluetoothSignalLost`).
  public func setInRange(_ serialNumber: String, _ inRange: Bool) {
    mutate { world in
      self.step(serialNumber, in: &world) { machine, around, random in
        machine.setInRange(inRange, around, random: &random)
      }
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
      world.entries[serialNumber]?.machine.setDistance(metres)
      return []
    }
  }

  /// Switches a reader on or off. Off drops its link (`poweredOff`) and stops its clocks (the
  /// 24-hour and idle counts start over when it is switched on).
  public func setPower(_ serialNumber: String, on: Bool) {
    mutate { world in
      self.step(serialNumber, in: &world) { machine, around, random in
        machine.setPower(on: on, around, random: &random)
      }
    }
  }

  /// Makes an M2 or WisePad 3 perform its security reboot now, as if its 24 hours were up; the
  /// count starts over when it is back. A Chipper 2X, or a reader that is off or rebooting, ignores it.
  public func forceSecurityReboot(_ serialNumber: String) {
    mutate { world in
      self.step(serialNumber, in: &world) { machine, around, _ in machine.forceSecurityReboot(around) }
    }
  }

  /// The battery level below which a reader not on external power refuses to install an update.
  public static let minimumUpdateBattery = SimulatedReaderStateMachine.minimumUpdateBattery
  /// How many progress reports a reader sends while installing an update.
  public static let updateSteps = SimulatedReaderStateMachine.updateSteps

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
      guard world.entries[serialNumber] != nil else {
        self.record(serialNumber, "softwareVersionSet", in: &world)
        return []
      }
      return self.step(serialNumber, in: &world) { machine, _, _ in machine.setSoftwareVersion(version) }
    }
  }

  /// Makes the reader's next update install fail with a reader error once it reaches `progress`.
  public func failNextUpdate(_ serialNumber: String, atProgress progress: Double) {
    mutate { world in
      world.entries[serialNumber]?.machine.nextUpdateFault = .fail(atProgress: progress)
      return []
    }
  }

  /// Makes the reader drop its link during its next update install once it reaches `progress`.
  public func dropLinkDuringNextUpdate(_ serialNumber: String, atProgress progress: Double) {
    mutate { world in
      world.entries[serialNumber]?.machine.nextUpdateFault = .dropLink(atProgress: progress)
      return []
    }
  }

  /// Whether the reader is installing an update right now.
  public func isInstallingUpdate(_ serialNumber: String) -> Bool {
    core.world.withLock { $0.entries[serialNumber]?.machine.install != nil }
  }

  /// How many things have happened in the world so far, the ones `worldEvents` no longer keeps included:
  /// every change of a link, of a reader's reachability or of its version is one, so an unchanged count
  /// means none of them changed.
  public var changeCount: Int { core.world.withLock { $0.log.appended } }

  /// The reader's state at this instant as the world knows it (link, pending connect, reachability,
  /// reboot, version, install), for checks against the ground truth; `nil` for a reader the world does not have.
  public func truth(_ serialNumber: String) -> SimulatedReaderTruth? {
    core.world.withLock { world in
      guard let machine = world.entries[serialNumber]?.machine else { return nil }
      return SimulatedReaderTruth(
        isLinked: machine.linked, isReachable: machine.isReachable(surroundings(world)),
        isRebooting: machine.rebootingUntil != nil, isPoweredOn: machine.reader.isPoweredOn,
        softwareVersion: machine.reader.softwareVersion,
        installProgress: machine.install.map { Double($0.step) / Double(Self.updateSteps) },
        isConnectPending: machine.pendingConnect)
    }
  }

  /// Drops a connected reader's link for no reason the reader reports (`unknown`: interference, a
  /// firmware fault). The reader stays on and in range, so it can be connected again at once. A
  /// reader without a link ignores it.
  public func dropLink(_ serialNumber: String) {
    mutate { world in
      self.step(serialNumber, in: &world) { machine, around, random in machine.dropLink(around, random: &random) }
    }
  }

  /// Sets a reader's battery; a connected reader reports it, and at or below 5 % without external
  /// power the reader shuts down (`criticallyLowBattery`).
  public func setBattery(_ serialNumber: String, level: Double, isCharging: Bool? = nil) {
    mutate { world in
      self.step(serialNumber, in: &world) { machine, _, _ in machine.setBattery(level: level, isCharging: isCharging) }
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
      var events: [Machine.Event] = [.radio(.radioStateChanged(isPoweredOn: on))]
      for serial in world.order {
        events += self.step(serial, in: &world) { machine, around, random in
          machine.radioChanged(around, random: &random)
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
        _ = self.step(serial, in: &world) { machine, _, _ in machine.hostTerminated() }
      }
      return []
    }
  }

  // MARK: BluetoothCentral and ReaderLink

  public func setEventHandler(_ handler: @escaping @Sendable (BluetoothEvent) -> Void) {
    core.world.withLock { $0.handler = handler }
  }

  public func setLinkEventHandler(_ handler: @escaping @Sendable (ReaderLinkEvent) -> Void) {
    core.world.withLock { $0.linkHandler = handler }
  }

  public var isPoweredOn: Bool { core.world.withLock { $0.radioOn } }

  public func startScan() {
    mutate { world in
      guard !world.scanning else { return [] }
      world.scanning = true
      var events: [Machine.Event] = []
      for serial in world.order {
        events += self.step(serial, in: &world) { machine, around, random in
          machine.scanStarted(around, random: &random)
        }
      }
      return events
    }
  }

  public func stopScan() {
    mutate { world in
      world.scanning = false
      for serial in world.order {
        _ = self.step(serial, in: &world) { machine, _, _ in machine.scanStopped() }
      }
      return []
    }
  }

  public func connect(serialNumber: String) {
    mutate { world in
      guard world.entries[serialNumber] != nil else {
        let error =
          world.radioOn
          ? ReaderError(.readerNotFound, "no such reader", context: ["serialNumber": serialNumber])
          : ReaderError(.bluetoothDisabled, "Bluetooth is off")
        return [.radio(.didFailToConnect(serialNumber: serialNumber, error: error))]
      }
      return self.step(serialNumber, in: &world) { machine, around, random in
        machine.connectRequested(around, random: &random)
      }
    }
  }

  public func cancelConnect(serialNumber: String) {
    mutate { world in
      self.step(serialNumber, in: &world) { machine, around, random in
        machine.connectCanceled(around, random: &random)
      }
    }
  }

  public func disconnect(serialNumber: String) {
    clock.schedule(after: .milliseconds(100)) { [self] in
      mutate { world in
        self.step(serialNumber, in: &world) { machine, around, random in machine.linkClosed(around, random: &random) }
      }
    }
  }

  public func flashLEDs(serialNumber: String) {
    mutate { world in
      guard world.entries[serialNumber] != nil else {
        self.record(serialNumber, "flashedLEDs", in: &world)
        return []
      }
      return self.step(serialNumber, in: &world) { machine, _, _ in machine.flashLEDs() }
    }
  }

  public func reboot(serialNumber: String) {
    clock.schedule(after: .milliseconds(300)) { [self] in
      mutate { world in
        guard world.entries[serialNumber] != nil else {
          return [
            .link(.rebootResponse(serialNumber: serialNumber, error: ReaderError(.notConnected, "not connected")))
          ]
        }
        return self.step(serialNumber, in: &world) { machine, _, _ in machine.rebootRequested() }
      }
    }
  }

  public func installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?) {
    mutate { world in
      self.step(serialNumber, in: &world) { machine, _, _ in machine.installRequested(update: update, image: image) }
    }
  }

  public func cancelUpdate(serialNumber: String) {
    mutate { world in
      self.step(serialNumber, in: &world) { machine, _, _ in machine.installCanceled() }
    }
  }

  // MARK: The driver (called with the lock held; events are delivered after it is released)

  /// What the readers see of the world now.
  private func surroundings(_ world: World) -> Machine.Surroundings {
    Machine.Surroundings(radioOn: world.radioOn, scanning: world.scanning, now: clock.elapsed, interval: interval)
  }

  /// Feeds the reader `serialNumber` an input and performs what it says; returns its events.
  private func step(
    _ serialNumber: String, in world: inout World,
    _ input: (inout Machine, Machine.Surroundings, inout SeededRandom) -> [Machine.Action]
  ) -> [Machine.Event] {
    guard let slot = world.entries.slot(of: serialNumber) else { return [] }
    let around = surroundings(world)
    let actions = input(&world.entries[slot].machine, around, &world.random)
    return perform(actions, at: slot, in: &world)
  }

  /// A timer of the reader in `slot` fired.
  private func fire(_ timer: Machine.Timer, at slot: Int, in world: inout World) -> [Machine.Event] {
    world.entries[slot][timer] = nil
    let around = surroundings(world)
    let actions = world.entries[slot].machine.timerFired(timer, around, random: &world.random)
    return perform(actions, at: slot, in: &world)
  }

  /// Performs the actions of the reader in `slot`: timers on the clock, the log; returns its events.
  /// The reader is reached by slot, in place: no lookup and no copy of its entry, which counts with
  /// thousands of readers advertising at 10 Hz.
  private func perform(_ actions: [Machine.Action], at slot: Int, in world: inout World) -> [Machine.Event] {
    var events: [Machine.Event] = []
    for action in actions {
      switch action {
      case .arm(.advertise, let delay):
        world.entries[slot].advertising = clock.schedule(after: delay, world.entries.slots[slot].advertise)
      case .arm(let timer, let delay):
        let work = clock.schedule(after: delay) { [self] in
          mutate { world in self.fire(timer, at: slot, in: &world) }
        }
        world.entries[slot][timer] = work
      case .disarm(let timer):
        if let work = world.entries[slot][timer] { clock.cancel(work) }
        world.entries[slot][timer] = nil
      case .record(let kind):
        let serialNumber = world.entries.slots[slot].machine.reader.serialNumber
        record(serialNumber, kind, in: &world)
      case .event(let event):
        events.append(event)
      }
    }
    return events
  }

  /// Changes the world and delivers the events of the change, each in a work item of its own.
  private func mutate(_ body: (inout World) -> [Machine.Event]) {
    let (events, handler, linkHandler) = core.world.withLock { world in (body(&world), world.handler, world.linkHandler) }
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
}
