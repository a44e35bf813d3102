import DBus
import Foundation
import MCUmgr
import ReaderCore

/// The host's Bluetooth radio through BlueZ (`bluetoothd`) over the D-Bus system bus: a
/// `BluetoothCentral` for a `Terminal` on Linux.
///
/// It decides nothing itself: `BlueZCentralStateMachine` does, and this driver performs its actions
/// (D-Bus calls, timers, events). The bus connection's own thread reads messages; each one, each
/// reply and each timer becomes an input on the scheduler, and events reach the terminal there, never
/// from inside a command. A D-Bus call without a reply within `callTimeout` fails with `NoReply`.
/// When the bus connection ends it is opened again every `busRetryInterval`; meanwhile, and while
/// `bluetoothd` is away, the radio reads as off (links end with `bluetoothDisabled`, and the
/// terminal's reconnection waits for it to come back).
///
/// It is also the `ReaderLink` of the readers it connects: commands (reboot, software updates) go to
/// an `SMPReaderLink` over each reader's SMP characteristic (`SMPTransportProvider`), and battery
/// notifications from the Battery Service are reported next to that link's events.
///
/// ```swift
/// let scheduler = LiveScheduler()
/// let central = try BlueZCentral.open(
///   configuration: BlueZConfiguration(adapterName: "hci0"), scheduler: scheduler,
///   sha256: { SHA256Checksum.compute($0) })
/// let terminal = Terminal(central: central, readerLink: central, scheduler: scheduler)
/// ```
public final class BlueZCentral: BluetoothCentral, ReaderLink, SMPTransportProvider, Sendable {
  private struct Core {
    var machine: BlueZCentralStateMachine
    var handler: (@Sendable (BluetoothEvent) -> Void)?
    var linkHandler: (@Sendable (ReaderLinkEvent) -> Void)?
    var connection: DBusConnection?
    var generation: UInt64 = 0
    var timers: [BlueZCentralStateMachine.Timer: ScheduledWork] = [:]
    /// The calls awaiting their reply, with their timeout once armed.
    var callTimeouts: [UInt64: ScheduledWork?] = [:]
    /// Each reader's SMP transport, created when first asked for and kept.
    var transports: [String: BlueZSMPTransport] = [:]
  }

  /// Where everything runs; the terminal must use the same scheduler.
  public let scheduler: any Scheduler
  private let environment: [String: String]
  private let configuration: BlueZConfiguration
  private let core: Locked<Core>
  private let radio = Locked(false)
  /// The reader commands, spoken over each reader's SMP transport.
  private let smpLink: SMPReaderLink

  /// Opens the system bus now (within `timeout`) and returns a central over it, its radio state known.
  /// - Parameters:
  ///   - sha256: computes SHA-256 digests, for the images of software updates (pass
  ///     `SHA256Checksum.compute` from ReaderKit).
  /// - Throws: `bluetoothUnsupported`, with `context["missing"]` set to `bus` (no system bus answers),
  ///   `permission` (the bus's policy denies this process the calls to `org.bluez`), `bluetoothd`
  ///   (`org.bluez` has no owner) or `adapter` (no adapter, or not the one named).
  public static func open(
    configuration: BlueZConfiguration = BlueZConfiguration(), scheduler: any Scheduler,
    environment: [String: String] = ProcessInfo.processInfo.environment, timeout: Duration = .seconds(1),
    sha256: @escaping @Sendable ([UInt8]) -> SHA256Checksum
  ) throws(ReaderError) -> BlueZCentral {
    var session: BlueZBus.Session
    do { session = try BlueZBus.open(environment: environment, timeout: timeout) } catch {
      var error = error
      if error.context["missing"] == nil { error.context["missing"] = "bus" }
      throw error
    }
    guard let objects = session.objects else {
      session.connection.close()
      throw ReaderError(
        .bluetoothUnsupported, "bluetoothd is not running (no org.bluez on the system bus)",
        context: ["missing": "bluetoothd"])
    }
    var probe = BlueZCentralStateMachine(configuration: configuration)
    _ = probe.handle(.busOpened(objects), now: .zero)
    guard probe.adapterPath != nil else {
      session.connection.close()
      let which = configuration.adapterName.map { "no Bluetooth adapter named \($0)" } ?? "no Bluetooth adapter"
      throw ReaderError(
        .bluetoothUnsupported, which, context: ["missing": "adapter", "adapter": configuration.adapterName ?? ""])
    }
    let central = BlueZCentral(
      configuration: configuration, scheduler: scheduler, environment: environment, sha256: sha256, opening: false)
    central.adopt(session)
    return central
  }

  /// Creates a central that opens the bus in the background (and keeps trying every
  /// `busRetryInterval`); the radio reads as off until `bluetoothd` and the adapter are there.
  public convenience init(
    configuration: BlueZConfiguration = BlueZConfiguration(), scheduler: any Scheduler,
    environment: [String: String] = ProcessInfo.processInfo.environment,
    sha256: @escaping @Sendable ([UInt8]) -> SHA256Checksum
  ) {
    self.init(
      configuration: configuration, scheduler: scheduler, environment: environment, sha256: sha256, opening: true)
  }

  private init(
    configuration: BlueZConfiguration, scheduler: any Scheduler, environment: [String: String],
    sha256: @escaping @Sendable ([UInt8]) -> SHA256Checksum, opening: Bool
  ) {
    self.scheduler = scheduler
    self.environment = environment
    self.configuration = configuration
    self.core = Locked(Core(machine: BlueZCentralStateMachine(configuration: configuration)))
    let transports = WeakTransportProvider()
    smpLink = SMPReaderLink(
      transports: transports, scheduler: scheduler, sha256: sha256, timings: configuration.imageUpgradeTimings)
    transports.central = self
    if opening { scheduler.execute { [self] in perform([.openBus]) } }
  }

  /// Closes the bus connection; the central stops for good (for tests and orderly shutdown).
  public func close() {
    let connection = core.withLock { core -> DBusConnection? in
      core.generation += 1
      defer { core.connection = nil }
      return core.connection
    }
    connection?.close()
  }

  // MARK: BluetoothCentral

  public func setEventHandler(_ handler: @escaping @Sendable (BluetoothEvent) -> Void) {
    core.withLock { $0.handler = handler }
  }

  public var isPoweredOn: Bool { radio.withLock { $0 } }

  public func startScan() { command(.startScan) }
  public func stopScan() { command(.stopScan) }
  public func connect(serialNumber: String) { command(.connect(serialNumber: serialNumber)) }
  public func cancelConnect(serialNumber: String) { command(.cancelConnect(serialNumber: serialNumber)) }
  public func disconnect(serialNumber: String) { command(.disconnect(serialNumber: serialNumber)) }

  // MARK: SMP transports

  public func smpTransport(forSerialNumber serialNumber: String) -> (any SMPTransport)? {
    core.withLock { core in
      if let transport = core.transports[serialNumber] { return transport }
      let transport = BlueZSMPTransport(central: self, serialNumber: serialNumber)
      core.transports[serialNumber] = transport
      return transport
    }
  }

  func smpMaximumWriteLength(_ serialNumber: String) -> Int? {
    core.withLock { $0.machine.maximumWriteLength(of: serialNumber) }
  }

  func smpSend(_ serialNumber: String, _ bytes: [UInt8]) {
    command(.smpSend(serialNumber: serialNumber, bytes: bytes))
  }

  func smpExpectLinkLoss(_ serialNumber: String, _ expectation: SMPLinkLossExpectation?) {
    command(.expectLinkLoss(serialNumber: serialNumber, expectation))
  }

  // MARK: ReaderLink

  public func setLinkEventHandler(_ handler: @escaping @Sendable (ReaderLinkEvent) -> Void) {
    core.withLock { $0.linkHandler = handler }
    smpLink.setLinkEventHandler(handler)
  }

  /// Does nothing: SMP has no command to flash a reader's LEDs.
  public func flashLEDs(serialNumber: String) {}

  /// The OS group's reset over SMP; see `SMPReaderLink`.
  public func reboot(serialNumber: String) { smpLink.reboot(serialNumber: serialNumber) }

  /// The MCUboot image upload, test, reset and confirm over SMP; see `SMPReaderLink`.
  public func installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?) {
    smpLink.installUpdate(serialNumber: serialNumber, update: update, image: image)
  }

  public func cancelUpdate(serialNumber: String) { smpLink.cancelUpdate(serialNumber: serialNumber) }

  // MARK: Driving the machine

  /// A terminal command: handled now, its events delivered as later work items (never re-entrantly).
  private func command(_ input: BlueZCentralStateMachine.Input) {
    feed(input, deferEvents: true)
  }

  private func feed(_ input: BlueZCentralStateMachine.Input, deferEvents: Bool = false) {
    let (actions, radioOn) = core.withLock { core in
      let actions = core.machine.handle(input, now: scheduler.elapsed)
      return (actions, core.machine.isRadioOn)
    }
    radio.withLock { $0 = radioOn }
    perform(actions, deferEvents: deferEvents)
  }

  private func perform(_ actions: [BlueZCentralStateMachine.Action], deferEvents: Bool = false) {
    for action in actions {
      switch action {
      case .emit(let event):
        let handler = core.withLock { $0.handler }
        if deferEvents { scheduler.execute { handler?(event) } } else { handler?(event) }
      case .emitSMP(let serial, let event):
        // Never from inside a call the SMP link makes: always a work item of its own.
        let transport = core.withLock { $0.transports[serial] }
        scheduler.execute { transport?.deliver(event) }
      case .emitLink(let event):
        let handler = core.withLock { $0.linkHandler }
        if deferEvents { scheduler.execute { handler?(event) } } else { handler?(event) }
      case .call(let id, let call):
        send(id, call)
      case .arm(let timer, let delay):
        let work = scheduler.schedule(after: delay) { [self] in
          guard core.withLock({ $0.timers.removeValue(forKey: timer) }) != nil else { return }
          feed(.timerFired(timer))
        }
        let old = core.withLock { core in
          defer { core.timers[timer] = work }
          return core.timers[timer]
        }
        if let old { scheduler.cancel(old) }
      case .disarm(let timer):
        if let work = core.withLock({ $0.timers.removeValue(forKey: timer) }) { scheduler.cancel(work) }
      case .openBus:
        let environment = self.environment
        scheduler.performBlocking({
          Result { () throws(ReaderError) in
            try BlueZBus.open(environment: environment, timeout: .seconds(2))
          }
        }) { [self] result in
          switch result {
          case .success(let session): adopt(session)
          case .failure: feed(.busFailed)
          }
        }
      }
    }
  }

  /// Takes over an open bus session: tells the machine, then starts the session's reader thread.
  ///
  /// Off the scheduler (from `open`, before anyone holds the central) the machine learns of the bus at
  /// once, so the radio's state is known when `open` returns: a terminal created next reads it from
  /// `isPoweredOn`, and no `radioStateChanged` can fall between that read and its event handler. No
  /// signal can overtake it: nothing is read from the bus before the reader thread starts.
  private func adopt(_ session: BlueZBus.Session) {
    let generation = core.withLock { core -> UInt64 in
      core.generation += 1
      core.connection = session.connection
      return core.generation
    }
    feed(.busOpened(session.objects))
    session.connection.start(
      onMessage: { [self] message in
        guard let signal = BlueZSignal(message) else { return }
        scheduler.execute { [self] in
          guard core.withLock({ $0.generation }) == generation else { return }
          feed(.signal(signal))
        }
      },
      onClose: { [self] _ in
        scheduler.execute { [self] in
          let current = core.withLock { core -> Bool in
            guard core.generation == generation else { return false }
            core.connection = nil
            return true
          }
          if current { feed(.busLost) }
        }
      })
  }

  private func send(_ id: UInt64, _ call: BlueZCall) {
    let (connection, generation) = core.withLock { ($0.connection, $0.generation) }
    guard let connection else {
      let error = DBusError(name: DBusError.disconnected, message: "the bus is not connected")
      scheduler.execute { [self] in feed(.reply(id, .failure(error))) }
      return
    }
    core.withLock { $0.callTimeouts[id] = .some(nil) }
    let serial = connection.call(call.message) { [self] result in
      scheduler.execute { [self] in
        let entry = core.withLock { core -> ScheduledWork?? in
          guard core.generation == generation else { return nil }
          return core.callTimeouts.removeValue(forKey: id)
        }
        guard let entry else { return }  // Timed out already, or from a bus connection that ended.
        if let timeout = entry { scheduler.cancel(timeout) }
        feed(.reply(id, result))
      }
    }
    guard let serial else { return }
    let work = scheduler.schedule(after: configuration.callTimeout) { [self] in
      guard core.withLock({ $0.callTimeouts.removeValue(forKey: id) }) != nil else { return }
      connection.abandon(serial)
      feed(.reply(id, .failure(DBusError(name: DBusError.noReply, message: "no reply within the call's time"))))
    }
    core.withLock { core in
      if core.callTimeouts[id] != nil { core.callTimeouts[id] = .some(work) }
    }
  }
}

/// Hands out the central's SMP transports without keeping the central alive (the central owns the SMP
/// link that holds this provider).
private final class WeakTransportProvider: SMPTransportProvider, Sendable {
  private struct Target {
    weak var central: BlueZCentral?
  }

  private let target = Locked(Target())

  var central: BlueZCentral? {
    get { target.withLock { $0.central } }
    set { target.withLock { $0.central = newValue } }
  }

  func smpTransport(forSerialNumber serialNumber: String) -> (any SMPTransport)? {
    central?.smpTransport(forSerialNumber: serialNumber)
  }
}
