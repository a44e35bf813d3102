import Foundation
import ReaderCore

/// The rules of one simulated Bluetooth reader, as a pure machine: when it can be reached, when it
/// advertises, how a connect completes, its security reboot and idle power-down, its battery, and how
/// it installs an update. `SimulatedBluetoothCentral` keeps one per reader, performs its actions (timers
/// on the world's clock, the world's log, events to the host) and feeds it the script's and the
/// host's requests.
///
/// Rules:
/// - A reader is reachable while the host's radio is on and it is switched on, in range and not
///   rebooting. A reachable reader without a link advertises about once every advertising interval
///   while the host scans (the first time at a random point of the interval, then every 0.8–1.2
///   intervals), or, when the host asked to connect, completes the link after its connect latency.
/// - A reader that can no longer be reached drops its link (`didDisconnect` with the reason) and stops
///   advertising; a connect pending when the host's radio goes off fails (`bluetoothDisabled`).
/// - M2 and WisePad 3 reboot themselves 24 hours after they last started; a reader on battery left
///   without host activity (a connect, a reboot, an install) for 10 hours switches itself off, as
///   does one at or below 5 % on battery. A reader that is off runs neither count.
/// - An install runs in `updateSteps` steps over the update's estimated time, reporting progress; the
///   new version is taken all at once at the last step, so a reader that loses its link or stops
///   keeps its previous version whole. A reader below 50 % on battery refuses to install.
/// - Late timers (a step after the link dropped, an advertisement after the scan stopped) do nothing.
struct SimulatedReaderStateMachine {
  /// The timers a reader asks its world for.
  enum Timer: UInt8, Hashable, Sendable, CaseIterable {
    /// The next advertisement.
    case advertise
    /// The 24-hour security reboot.
    case securityReboot
    /// The 10-hour idle power-down.
    case idlePowerDown
    /// The link asked for by the host comes up.
    case connect
    /// The next step of an install.
    case installStep
    /// An accepted reboot starts (fire and forget: never disarmed).
    case rebootStart
    /// A reboot is over (fire and forget: never disarmed).
    case rebootDone
  }

  /// What the reader tells its host.
  enum Event: Sendable, Hashable {
    case radio(BluetoothEvent)
    case link(ReaderLinkEvent)
  }

  enum Action: Equatable, Sendable {
    case arm(Timer, after: Duration)
    case disarm(Timer)
    /// Write `String` to the world's log.
    case record(String)
    /// Tell the host, once the current change of the world is complete.
    case event(Event)
  }

  /// What the reader sees of the world around it.
  struct Surroundings {
    var radioOn: Bool
    var scanning: Bool
    var now: Duration
    var interval: Interval

    /// The mean interval between two advertisements.
    var advertisingInterval: Duration { interval.duration }

    init(radioOn: Bool, scanning: Bool, now: Duration, interval: Interval) {
      self.radioOn = radioOn
      self.scanning = scanning
      self.now = now
      self.interval = interval
    }

    init(radioOn: Bool, scanning: Bool, now: Duration, advertisingInterval: Duration) {
      self.init(radioOn: radioOn, scanning: scanning, now: now, interval: Interval(advertisingInterval))
    }
  }

  /// The advertising interval, with its attoseconds as a `Double` worked out once per world: scaling it is what
  /// `Duration * Double` does (`Int128(Double(attoseconds) * factor)`), without converting the interval to a
  /// `Double` and back through `Int128`'s generic conversions at every advertisement.
  struct Interval {
    let duration: Duration
    private let attoseconds: Double

    init(_ duration: Duration) {
      self.duration = duration
      attoseconds = Double(duration.attoseconds)
    }

    /// `duration * factor`, to the attosecond.
    func scaled(by factor: Double) -> Duration {
      let scaled = attoseconds * factor
      // Truncating through `Int64` where the value fits is the same truncation as `Int128`'s, in one instruction.
      guard abs(scaled) < 9.2e18 else { return Duration(attoseconds: Int128(scaled)) }
      return Duration(attoseconds: Int128(Int64(scaled)))
    }
  }

  /// An update being installed: the image is kept aside until the last step.
  struct Install: Equatable {
    var update: ReaderSoftwareUpdate
    var image: Data?
    var fault: SimulatedUpdateFault?
    var step = 0
  }

  /// How long a reader may stay idle on battery before it switches itself off.
  static let idlePowerDownInterval = Duration.seconds(10 * 3600)
  /// How long M2 and WisePad 3 run before their security reboot.
  static let securityRebootInterval = Duration.seconds(24 * 3600)
  /// The battery level below which a reader not on external power refuses to install an update.
  static let minimumUpdateBattery = 0.5
  /// How many progress reports a reader sends while installing an update.
  static let updateSteps = 50
  /// How long an accepted reboot takes to start.
  static let rebootStartDelay = Duration.milliseconds(200)

  // What every advertisement reads comes first, side by side (stored properties are laid out in this order):
  // with thousands of readers, each advertisement reaches a reader that is not in the cache, and every line
  // of it read costs a miss.
  // The machine's own fields, a few bytes, come before the reader, whose fields an advertisement reads
  // (serial number, model, details, power and range) are its first.
  private(set) var rebootingUntil: Duration?
  private(set) var linked = false
  /// The cancellable timers armed now.
  private var armed = TimerSet()
  /// `reader.meanSignalStrength`, worked out when the reader moves rather than at every advertisement.
  private var meanSignalStrength: Int
  private(set) var reader: SimulatedReader
  private(set) var pendingConnect = false
  private(set) var install: Install?
  /// A fault scripted for the next install.
  var nextUpdateFault: SimulatedUpdateFault?
  private(set) var ledFlashes = 0
  private(set) var connectRequests = 0

  /// A set of timers as bits: a reader's timers are tested on every advertisement, and hashing them into a
  /// `Set` cost more than the rest of an advertisement's rules.
  private struct TimerSet {
    private var bits: UInt8 = 0

    func contains(_ timer: Timer) -> Bool { bits & (1 << timer.rawValue) != 0 }
    mutating func insert(_ timer: Timer) { bits |= 1 << timer.rawValue }
    /// Removes `timer`; returns whether it was there.
    @discardableResult
    mutating func remove(_ timer: Timer) -> Bool {
      defer { bits &= ~(1 << timer.rawValue) }
      return contains(timer)
    }
  }

  init(reader: SimulatedReader) {
    self.reader = reader
    meanSignalStrength = reader.meanSignalStrength
  }

  /// Whether the host can reach the reader.
  func isReachable(_ world: Surroundings) -> Bool {
    world.radioOn && reader.isPoweredOn && reader.isInRange && rebootingUntil == nil
  }

  // MARK: The script

  /// The reader enters the world: it starts its counts if it is on.
  mutating func added() -> [Action] {
    started()
  }

  mutating func setInRange(_ inRange: Bool, _ world: Surroundings, random: inout SeededRandom) -> [Action] {
    guard reader.isInRange != inRange else { return [] }
    reader.isInRange = inRange
    return [.record(inRange ? "backInRange" : "outOfRange")]
      + (inRange ? becameReachable(world, random: &random) : unreachable(.bluetoothSignalLost))
  }

  mutating func setDistance(_ metres: Double) {
    reader.distance = metres
    meanSignalStrength = reader.meanSignalStrength
  }

  mutating func setPower(on: Bool, _ world: Surroundings, random: inout SeededRandom) -> [Action] {
    guard reader.isPoweredOn != on else { return [] }
    guard on else { return [.record("poweredOff")] + switchOff(.poweredOff) }
    reader.isPoweredOn = true
    return [.record("poweredOn")] + started() + becameReachable(world, random: &random)
  }

  /// An M2 or WisePad 3 performs its security reboot now; a Chipper 2X ignores it.
  mutating func forceSecurityReboot(_ world: Surroundings) -> [Action] {
    guard reader.deviceType.hasSecurityReboot else { return [] }
    return disarm(.securityReboot) + rebootNow(.securityReboot, world)
  }

  mutating func setSoftwareVersion(_ version: String) -> [Action] {
    reader.softwareVersion = version
    return [.record("softwareVersionSet")]
  }

  /// The link drops for no reason the reader reports; the reader stays reachable.
  mutating func dropLink(_ world: Surroundings, random: inout SeededRandom) -> [Action] {
    guard linked else { return [] }
    return [.record("linkLost")] + unreachable(.unknown) + becameReachable(world, random: &random)
  }

  mutating func setBattery(level: Double, isCharging: Bool?) -> [Action] {
    reader.batteryLevel = min(max(level, 0), 1)
    if let isCharging { reader.isCharging = isCharging }
    var actions: [Action] = []
    if linked {
      actions.append(
        .event(
          .link(
            .batteryDidChange(
              serialNumber: reader.serialNumber, level: reader.batteryLevel, isCharging: reader.isCharging))))
    }
    if reader.batteryLevel <= BatteryStatus.criticalThreshold && !reader.isCharging && reader.isPoweredOn {
      actions += [.record("criticalBatteryShutdown")] + switchOff(.criticallyLowBattery)
    }
    return actions
  }

  /// The host's radio went on or off (`world` already says so).
  mutating func radioChanged(_ world: Surroundings, random: inout SeededRandom) -> [Action] {
    world.radioOn ? becameReachable(world, random: &random) : unreachable(.bluetoothDisabled)
  }

  /// The host app went away: every link and pending connect is dropped without a word.
  mutating func hostTerminated() -> [Action] {
    let actions = disarm(.advertise) + disarm(.connect)
    pendingConnect = false
    linked = false
    return actions + interruptInstall()
  }

  // MARK: The host

  mutating func scanStarted(_ world: Surroundings, random: inout SeededRandom) -> [Action] {
    scheduleAdvertisement(world, random: &random)
  }

  mutating func scanStopped() -> [Action] {
    disarm(.advertise)
  }

  /// The host asks to connect. With its radio off the request fails at once.
  mutating func connectRequested(_ world: Surroundings, random: inout SeededRandom) -> [Action] {
    connectRequests += 1
    guard world.radioOn else {
      return [.event(.radio(.didFailToConnect(serialNumber: reader.serialNumber, error: Self.radioOff)))]
    }
    pendingConnect = true
    return activity() + becameReachable(world, random: &random)
  }

  /// The host abandons its connect, or lets go of the link without waiting for the reader.
  mutating func connectCanceled(_ world: Surroundings, random: inout SeededRandom) -> [Action] {
    pendingConnect = false
    var actions = disarm(.connect)
    guard linked else { return actions }
    linked = false
    actions += interruptInstall() + [.record("linkAbandoned")]
    return actions + scheduleAdvertisement(world, random: &random)
  }

  /// The host's disconnect reaches the reader.
  mutating func linkClosed(_ world: Surroundings, random: inout SeededRandom) -> [Action] {
    guard linked else { return [] }
    linked = false
    var actions = interruptInstall() + [.record("disconnected")]
    actions += scheduleAdvertisement(world, random: &random)
    return actions + [
      .event(.radio(.didDisconnect(serialNumber: reader.serialNumber, reason: .disconnectRequested)))
    ]
  }

  mutating func flashLEDs() -> [Action] {
    ledFlashes += 1
    return [.record("flashedLEDs")]
  }

  /// The host's reboot request reaches the reader: accepted while linked, and carried out shortly after.
  mutating func rebootRequested() -> [Action] {
    guard linked else {
      return [
        .event(
          .link(.rebootResponse(serialNumber: reader.serialNumber, error: ReaderError(.notConnected, "not connected"))))
      ]
    }
    return activity() + [
      .arm(.rebootStart, after: Self.rebootStartDelay),
      .event(.link(.rebootResponse(serialNumber: reader.serialNumber, error: nil))),
    ]
  }

  mutating func installRequested(update: ReaderSoftwareUpdate, image: Data?) -> [Action] {
    guard linked, install == nil else { return [] }
    var actions = activity()
    let planned = nextUpdateFault
    nextUpdateFault = nil
    if reader.batteryLevel < Self.minimumUpdateBattery && !reader.isCharging {
      let level = reader.batteryLevel
      return actions + [
        .record("updateRefusedLowBattery"),
        .event(
          .link(
            .updateFinished(
              serialNumber: reader.serialNumber,
              error: ReaderError(
                .readerSoftwareUpdateFailedBatteryLow,
                "the reader's battery is too low to install the update; charge it",
                context: ["batteryLevel": "\(Int((level * 100).rounded())) %"])))),
      ]
    }
    install = Install(update: update, image: image, fault: planned)
    actions.append(.record("updateStarted"))
    return actions + scheduleInstallStep()
  }

  mutating func installCanceled() -> [Action] {
    guard install != nil else { return [] }
    let actions = disarm(.installStep)
    install = nil
    return actions + [
      .record("updateCanceled"),
      .event(.link(.updateFinished(serialNumber: reader.serialNumber, error: .canceled("installUpdate")))),
    ]
  }

  // MARK: Timers

  mutating func timerFired(_ timer: Timer, _ world: Surroundings, random: inout SeededRandom) -> [Action] {
    armed.remove(timer)
    switch timer {
    case .advertise: return advertise(world, random: &random)
    case .securityReboot: return rebootNow(.securityReboot, world)
    case .idlePowerDown:
      guard reader.isPoweredOn else { return [] }
      if reader.isCharging { return activity() }
      return [.record("idlePowerDown")] + switchOff(.idlePowerDown)
    case .connect: return completeConnect(world)
    case .installStep: return installStep(world, random: &random)
    case .rebootStart: return rebootNow(.rebootRequested, world)
    case .rebootDone:
      rebootingUntil = nil
      return [.record("rebooted")] + started() + becameReachable(world, random: &random)
    }
  }

  // MARK: Mechanics

  private static let radioOff = ReaderError(.bluetoothDisabled, "Bluetooth is off")

  private mutating func arm(_ timer: Timer, after delay: Duration) -> Action {
    if timer != .rebootStart && timer != .rebootDone { armed.insert(timer) }
    return .arm(timer, after: delay)
  }

  private mutating func disarm(_ timer: Timer) -> [Action] {
    armed.remove(timer) ? [.disarm(timer)] : []
  }

  /// The reader just powered on or finished a reboot: its security and idle counts start again.
  private mutating func started() -> [Action] {
    guard reader.isPoweredOn else { return [] }
    var actions = disarm(.securityReboot)
    if reader.deviceType.hasSecurityReboot { actions.append(arm(.securityReboot, after: Self.securityRebootInterval)) }
    return actions + activity()
  }

  /// Host activity: the idle count starts again (a reader that is off counts nothing).
  private mutating func activity() -> [Action] {
    guard reader.isPoweredOn else { return [] }
    return disarm(.idlePowerDown) + [arm(.idlePowerDown, after: Self.idlePowerDownInterval)]
  }

  /// The reader switches itself off (or is switched off): its link drops and its counts stop.
  private mutating func switchOff(_ reason: DisconnectReason) -> [Action] {
    reader.isPoweredOn = false
    return disarm(.securityReboot) + disarm(.idlePowerDown) + unreachable(reason)
  }

  private mutating func rebootNow(_ reason: DisconnectReason, _ world: Surroundings) -> [Action] {
    guard reader.isPoweredOn, rebootingUntil == nil else { return [] }
    let actions = [Action.record(reason == .securityReboot ? "securityReboot" : "rebooting")] + unreachable(reason)
    rebootingUntil = world.now + reader.rebootDuration
    return actions + [arm(.rebootDone, after: reader.rebootDuration)]
  }

  /// The reader can no longer be reached: its link drops for `reason` and it stops advertising.
  private mutating func unreachable(_ reason: DisconnectReason) -> [Action] {
    var actions = disarm(.advertise) + disarm(.connect)
    if linked {
      actions += interruptInstall()
      linked = false
      actions.append(.event(.radio(.didDisconnect(serialNumber: reader.serialNumber, reason: reason))))
    } else if pendingConnect && reason == .bluetoothDisabled {
      pendingConnect = false
      actions.append(.event(.radio(.didFailToConnect(serialNumber: reader.serialNumber, error: Self.radioOff))))
    }
    return actions
  }

  /// The reader may be reachable again: a pending connect completes, or it advertises again.
  private mutating func becameReachable(_ world: Surroundings, random: inout SeededRandom) -> [Action] {
    guard isReachable(world), !linked else { return [] }
    guard pendingConnect else { return scheduleAdvertisement(world, random: &random) }
    guard !armed.contains(.connect) else { return [] }
    return [arm(.connect, after: reader.connectLatency)]
  }

  private mutating func completeConnect(_ world: Surroundings) -> [Action] {
    guard pendingConnect, isReachable(world) else { return [] }
    pendingConnect = false
    linked = true
    return disarm(.advertise) + [
      .record("connected"), .event(.radio(.didConnect(serialNumber: reader.serialNumber, info: reader.info))),
    ]
  }

  private mutating func scheduleAdvertisement(_ world: Surroundings, random: inout SeededRandom) -> [Action] {
    advertisingTimer(world, random: &random, first: true).map { [$0] } ?? []
  }

  /// Arms the advertising timer if the reader should advertise and it is not armed.
  private mutating func advertisingTimer(_ world: Surroundings, random: inout SeededRandom, first: Bool) -> Action? {
    advertisingDelay(world, random: &random, first: first).map { .arm(.advertise, after: $0) }
  }

  /// `advertisingTimer`'s rule, saying only the delay it arms the timer for: an `Action` holds any event a reader
  /// can send, so the advertisement's path, which runs for every advertisement, does not build one to copy.
  private mutating func advertisingDelay(_ world: Surroundings, random: inout SeededRandom, first: Bool) -> Duration? {
    guard world.scanning, !armed.contains(.advertise), !linked, isReachable(world) else { return nil }
    let unit = random.nextUnit()
    // The first advertisement comes at a random point of the interval; the rest every 0.8–1.2 intervals.
    let delay = world.interval.scaled(by: first ? unit : 0.8 + 0.4 * unit)
    armed.insert(.advertise)
    return delay
  }

  /// The advertising timer fired: the reader advertises if it still can (with signal noise), and
  /// arms the timer again.
  private mutating func advertise(_ world: Surroundings, random: inout SeededRandom) -> [Action] {
    let (advertisement, next) = advertisingTimerFired(world, random: &random)
    var actions: [Action] = []
    if let next { actions.append(.arm(.advertise, after: next)) }
    if let advertisement { actions.append(.event(.radio(.advertisement(advertisement)))) }
    return actions
  }

  /// What `timerFired(.advertise, …)` says, without building its actions: the advertisement (`nil` when the
  /// reader cannot advertise now) and when the advertising timer fires again (`nil`: it is not armed again).
  /// The world calls this for every advertisement of every reader; the timer is armed (`armed` knows it)
  /// exactly when `timerFired` would say `.arm(.advertise, …)`.
  mutating func advertisingTimerFired(_ world: Surroundings, random: inout SeededRandom) -> (
    advertisement: Advertisement?, nextAfter: Duration?
  ) {
    armed.remove(.advertise)
    guard world.scanning, isReachable(world), !linked else { return (nil, nil) }
    let noise = Int(random.next() % 7) - 3
    let advertisement = Advertisement(
      serialNumber: reader.serialNumber, deviceType: reader.deviceType,
      signalStrength: meanSignalStrength + noise, info: reader.info)
    return (advertisement, advertisingDelay(world, random: &random, first: false))
  }

  private mutating func scheduleInstallStep() -> [Action] {
    guard let install else { return [] }
    return [
      arm(
        .installStep,
        after: SimulatedBluetoothCentral.installDuration(install.update.durationEstimate) / Self.updateSteps)
    ]
  }

  private mutating func installStep(_ world: Surroundings, random: inout SeededRandom) -> [Action] {
    guard var current = install, linked else { return [] }
    current.step += 1
    let progress = Double(current.step) / Double(Self.updateSteps)
    let serial = reader.serialNumber
    switch current.fault {
    case .fail(let at) where progress >= at:
      install = nil
      return [
        .record("updateFailed"),
        .event(
          .link(
            .updateFinished(
              serialNumber: serial,
              error: ReaderError(
                .readerSoftwareUpdateFailedReaderError, "the reader could not install the update",
                context: ["progress": "\(Int((progress * 100).rounded())) %"])))),
      ]
    case .dropLink(let at) where progress >= at:
      return [.record("linkLost")] + unreachable(.unknown) + becameReachable(world, random: &random)
    default:
      break
    }
    guard current.step >= Self.updateSteps else {
      install = current
      return scheduleInstallStep() + [.event(.link(.updateProgress(serialNumber: serial, progress: progress)))]
    }
    // The last step: only now does the reader switch to the new version, all at once.
    install = nil
    reader.softwareVersion = current.update.deviceSoftwareVersion
    return [
      .record("updateInstalled"), .event(.link(.updateProgress(serialNumber: serial, progress: 1))),
      .event(.link(.updateFinished(serialNumber: serial, error: nil))),
    ]
  }

  /// The reader lost its link while installing: the install stops and the new version is dropped.
  private mutating func interruptInstall() -> [Action] {
    guard install != nil else { return [] }
    let actions = disarm(.installStep)
    install = nil
    return actions + [.record("updateInterrupted")]
  }
}
