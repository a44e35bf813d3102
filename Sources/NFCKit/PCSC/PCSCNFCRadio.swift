package import PCSCKit
public import ReaderCore

/// An `NFCRadio` over PC/SC: any contactless reader pcsc-lite drives (ACS ACR122U and ACR1252U, Identiv,
/// HID Omnikey), reading and writing NFC Forum Type 4 and Type 2 tags with the same session code that
/// runs on the simulator.
///
/// Its rules are `PCSCRadioStateMachine`'s; this class performs them: PC/SC calls through a
/// `PCSCService` (the host's pcsc-lite by default, loaded at run time), timers on the scheduler, turns
/// in the cross-process session line through an `NFCSessionLock` (files under the configuration's
/// `lockDirectory`), and events delivered on the scheduler, each in a work item of its own. The
/// system's rules (time limit, what a second session gets, which readers, how long a tag may take)
/// come from `NFCSystemConfiguration`, the host's configuration file.
///
/// What the Core NFC session sees:
/// - `readingAvailable` is true when pcscd runs and at least one reader (the configured one, when
///   there is one) is plugged in; it asks pcscd each time it is read.
/// - A session waits for its turn while another process's session runs (or ends with
///   `readerSessionInvalidationErrorSystemIsBusy` under `when-busy = refuse`), then polls every reader,
///   readers plugged in meanwhile included.
/// - pcscd stopping ends the session with `readerSessionInvalidationErrorSessionTerminatedUnexpectedly`
///   (the PC/SC code as its `cause`); a tag that another program holds past `busy-timeout` ends it with
///   `readerSessionInvalidationErrorSystemIsBusy`; a tag that stops answering fails its command with
///   `readerTransceiveErrorTagConnectionLost` after `command-timeout`.
/// - A desktop reader has no scan sheet: `presentSheet` and the like do nothing.
public final class PCSCNFCRadio: NFCRadio, Sendable {
  private struct Driver {
    var machine: PCSCRadioStateMachine
    var handler: (@Sendable (NFCRadioEvent) -> Void)?
    var timers: [PCSCRadioStateMachine.Timer: ScheduledWork] = [:]
  }

  /// The system's configuration the radio follows.
  public let configuration: NFCSystemConfiguration
  private let scheduler: any Scheduler
  private let service: any PCSCService
  private let lock: any NFCSessionLock
  private let driver: Locked<Driver>

  /// A radio over this host's pcsc-lite, following `configuration`; `nil` when the pcsc-lite library
  /// cannot be loaded (not installed, or not a 64-bit Linux host).
  public convenience init?(configuration: NFCSystemConfiguration, scheduler: any Scheduler) {
    guard case .success(let service) = LivePCSCService.system(scheduler: scheduler) else { return nil }
    self.init(
      service: service, lock: FileSessionLock(directory: configuration.lockDirectory), configuration: configuration,
      scheduler: scheduler)
  }

  /// A radio over `service`, taking turns through `lock`.
  package init(
    service: any PCSCService, lock: any NFCSessionLock, configuration: NFCSystemConfiguration,
    scheduler: any Scheduler
  ) {
    self.configuration = configuration
    self.scheduler = scheduler
    self.service = service
    self.lock = lock
    let settings = PCSCRadioStateMachine.Settings(
      reader: configuration.reader, commandTimeout: configuration.commandTimeout,
      busyTimeout: configuration.busyTimeout, refusesWhenBusy: configuration.whenBusy == .refuse)
    driver = Locked(Driver(machine: PCSCRadioStateMachine(settings: settings)))
  }

  /// The PC/SC readers the configuration lets the radio use, with their states now (one round trip to
  /// pcscd); the error says why there are none to ask (pcscd not running).
  package func readers() -> Result<[PCSCReaderState], PCSCError> {
    service.probe().map { readers in readers.filter { reader in configuration.reader.map(reader.name.contains) ?? true }
    }
  }

  // MARK: NFCRadio

  public func setEventHandler(_ handler: @escaping @Sendable (NFCRadioEvent) -> Void) {
    driver.withLock { $0.handler = handler }
  }

  /// Whether pcscd runs and a reader the configuration allows is plugged in (asked of pcscd now).
  public var isReadingAvailable: Bool {
    guard case .success(let readers) = readers() else { return false }
    return !readers.isEmpty
  }

  /// The configuration's time limit and busy behaviour.
  public var policy: NFCSystemPolicy { configuration.policy }

  public func startPolling(_ round: NFCRadioRequestID) { feed { $0.startPolling(round) } }

  public func stopPolling(_ round: NFCRadioRequestID) { feed { $0.stopPolling(round) } }

  public func connect(to tag: NFCRadioTagID, request: NFCRadioRequestID) {
    feed { $0.command(.connect, on: tag, request: request) }
  }

  public func queryNDEFStatus(of tag: NFCRadioTagID, request: NFCRadioRequestID) {
    feed { $0.command(.operation(.queryStatus), on: tag, request: request) }
  }

  public func readNDEF(from tag: NFCRadioTagID, request: NFCRadioRequestID) {
    feed { $0.command(.operation(.read), on: tag, request: request) }
  }

  public func writeNDEF(_ bytes: [UInt8], to tag: NFCRadioTagID, request: NFCRadioRequestID) {
    feed { $0.command(.operation(.write(bytes)), on: tag, request: request) }
  }

  public func writeLock(_ tag: NFCRadioTagID, request: NFCRadioRequestID) {
    feed { $0.command(.operation(.lock), on: tag, request: request) }
  }

  /// A desktop reader has no sheet.
  public func presentSheet(alertMessage: String) {}
  public func updateSheet(alertMessage: String) {}
  public func dismissSheet(errorMessage: String?) {}

  // MARK: Performing the machine's actions

  private func feed(_ input: (inout PCSCRadioStateMachine) -> [PCSCRadioStateMachine.Action]) {
    let now = scheduler.elapsed
    let (actions, handler) = driver.withLock { driver in
      driver.machine.now = now
      return (input(&driver.machine), driver.handler)
    }
    for action in actions { perform(action, handler) }
  }

  private func perform(_ action: PCSCRadioStateMachine.Action, _ handler: (@Sendable (NFCRadioEvent) -> Void)?) {
    switch action {
    case .emit(let event):
      if let handler { scheduler.execute { handler(event) } }
    case .tryLock(let round):
      // A few non-blocking system calls on a small directory: made in place, so that the line is
      // joined and left in the order the rounds begin and end.
      let attempt = lock.tryAcquire()
      feed { $0.lockAttempted(round, attempt) }
    case .releaseLock:
      lock.release()
    case .listReaders(let token):
      service.listReaders { [self] result in feed { $0.readersListed(token, result) } }
    case .waitForChange(let readers, let timeout, let token):
      service.waitForChange(readers, timeout: timeout) { [self] result in feed { $0.statusChanged(token, result) } }
    case .cancelWait:
      service.cancelWait()
    case .connect(let reader, let token):
      service.connect(reader) { [self] result in feed { $0.connected(token, result) } }
    case .transmit(let apdu, let card, let token):
      service.transmit(apdu, to: card) { [self] result in feed { $0.transmitted(token, result) } }
    case .disconnect(let card):
      service.disconnect(card)
    case .abandonCardLane:
      service.abandonCardLane()
    case .arm(let timer, let delay):
      let work = scheduler.schedule(after: delay) { [self] in
        driver.withLock { _ = $0.timers.removeValue(forKey: timer) }
        feed { $0.timerFired(timer) }
      }
      if let old = driver.withLock({ $0.timers.updateValue(work, forKey: timer) }) { scheduler.cancel(old) }
    case .disarm(let timer):
      if let work = driver.withLock({ $0.timers.removeValue(forKey: timer) }) { scheduler.cancel(work) }
    }
  }
}
