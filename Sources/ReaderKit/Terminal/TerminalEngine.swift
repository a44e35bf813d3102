import ReaderCore

/// The terminal's driver: feeds every input into the `TerminalStateMachine` and performs the actions
/// that come back, in order. It decides nothing: it talks to the radio, the reader link, the store
/// and the scheduler, and hands events to observers, delegates and completions.
///
/// Confinement: every method that touches the machine runs on `scheduler` (through `Terminal` and the
/// transports, which deliver there), one at a time; debug builds check it. That is what makes it
/// `@unchecked Sendable`.
final class TerminalEngine: @unchecked Sendable {
  typealias JobID = TerminalStateMachine.JobID

  /// What the app handed in with a command: the parts of it that are not values.
  enum Callbacks {
    case discover(any DiscoveryDelegate, @Sendable (ReaderError?) -> Void)
    case connect(any MobileReaderDelegate, @Sendable (Result<Reader, ReaderError>) -> Void)
    case command(@Sendable (ReaderError?) -> Void)
    case launch(any MobileReaderDelegate, @Sendable (Result<Reader?, ReaderError>) -> Void)
  }

  private struct Entry {
    var callbacks: Callbacks
    var cancelable: Cancelable?
  }

  /// What other threads may read without hopping onto the scheduler.
  struct Snapshot {
    var status = ConnectionStatus.notConnected
    var connectedReader: Reader?
  }

  let scheduler: any Scheduler
  let central: any BluetoothCentral
  let readerLink: any ReaderLink
  let store: any ReaderStore
  let catalog: (any UpdateCatalog)?
  let executor: DelegateExecutor
  let snapshot = Locked(Snapshot())
  let observers = ObserverRegistry<TerminalEvent>()
  weak var terminal: Terminal?

  /// Not checked for overlapping access at run time (a cost on every advertisement): the engine is confined to
  /// its scheduler, one input at a time (see above), and nothing it calls feeds it while the machine handles one.
  @exclusivity(unchecked) private var machine: TerminalStateMachine
  private var entries: [JobID: Entry] = [:]
  private var timers: [TerminalStateMachine.Timer: ScheduledWork] = [:]
  private var readerDelegate: (any MobileReaderDelegate)?
  private var reconnection: (handle: UInt64, cancelable: Cancelable)?
  private var installation: (handle: UInt64, cancelable: Cancelable)?

  init(
    scheduler: any Scheduler, central: any BluetoothCentral, readerLink: any ReaderLink, store: any ReaderStore,
    catalog: (any UpdateCatalog)?, executor: DelegateExecutor, machine: TerminalStateMachine
  ) {
    self.scheduler = scheduler
    self.central = central
    self.readerLink = readerLink
    self.store = store
    self.catalog = catalog
    self.executor = executor
    self.machine = machine
  }

  // MARK: Inputs (on the scheduler)

  func submit(_ id: JobID, _ command: TerminalStateMachine.Command, _ callbacks: Callbacks, cancelable: Cancelable) {
    entries[id] = Entry(callbacks: callbacks, cancelable: cancelable)
    feed(.submit(id, command))
  }

  func feed(_ input: TerminalStateMachine.Input) {
    assert(scheduler.isCurrent, "the terminal engine runs on its scheduler only")
    for action in machine.handle(input, now: scheduler.elapsed) { perform(action) }
  }

  /// Feeds a radio event; an advertisement takes the machine's short path.
  func feed(_ event: BluetoothEvent) {
    guard case .advertisement(let advertisement) = event else { return feed(.bluetooth(event)) }
    assert(scheduler.isCurrent, "the terminal engine runs on its scheduler only")
    for action in machine.advertisement(advertisement, now: scheduler.elapsed) { perform(action) }
  }

  /// The timers armed right now (for tests: none may outlive the work they time).
  var armedTimers: [String] { timers.keys.map(\.description).sorted() }

  // MARK: Actions

  private func perform(_ action: TerminalStateMachine.Action) {
    switch action {
    case .startScan:
      if let router = central as? any ReaderKindRouting {
        router.startScan(simulated: machine.scanningForSimulatedReaders)
      } else {
        central.startScan()
      }
    case .stopScan: central.stopScan()
    case .openLink(let serial): central.connect(serialNumber: serial)
    case .abandonLink(let serial): central.cancelConnect(serialNumber: serial)
    case .closeLink(let serial): central.disconnect(serialNumber: serial)
    case .reboot(let serial): readerLink.reboot(serialNumber: serial)
    case .flashLEDs(let serial): readerLink.flashLEDs(serialNumber: serial)
    case .arm(let timer, let delay):
      if let old = timers[timer] { scheduler.cancel(old) }
      timers[timer] = scheduler.schedule(after: delay) { [self] in
        guard timers.removeValue(forKey: timer) != nil else { return }
        feed(.timerFired(timer))
      }
    case .disarm(let timer):
      if let work = timers.removeValue(forKey: timer) { scheduler.cancel(work) }
    case .loadSavedReader:
      scheduler.performBlocking({ [store] in Result { () throws(ReaderError) in try store.loadLastReader() } }) {
        [self] result in feed(.savedReaderLoaded(result))
      }
    case .saveReader(let saved):
      scheduler.performBlocking({ [store] () -> ReaderError? in
        do throws(ReaderError) {
          try store.saveLastReader(saved)
          return nil
        } catch { return error }
      }) { [self] error in feed(.readerSaved(serialNumber: saved.serialNumber, error: error)) }
    case .checkForUpdate(let request, let installed, let date):
      scheduler.performBlocking({ [catalog] in
        Result { () throws(ReaderError) in try Self.catalog(catalog).availableUpdate(for: installed, at: date) }
      }) { [self] result in feed(.updateChecked(request: request, result)) }
    case .fetchImage(let request, let image):
      scheduler.performBlocking({ [catalog] in
        Result { () throws(ReaderError) in try Self.catalog(catalog).firmwareImage(for: image) }
      }) { [self] result in feed(.imageFetched(request: request, result)) }
    case .installUpdate(let serial, let update, let image):
      readerLink.installUpdate(serialNumber: serial, update: update, image: image)
    case .cancelUpdate(let serial):
      readerLink.cancelUpdate(serialNumber: serial)
    case .openInstallHandle(let handle):
      let cancelable = Cancelable { [scheduler] in scheduler.execute { self.feed(.cancelInstall(handle: handle)) } }
      installation = (handle, cancelable)
    case .closeInstallHandle(let handle, let canceled):
      guard let current = installation, current.handle == handle else { return }
      installation = nil
      executor { current.cancelable.finish(canceled: canceled) }
    case .status(let status, let reader):
      snapshot.withLock { $0 = Snapshot(status: status, connectedReader: reader) }
    case .report(let kind, let recipient):
      publish(kind)
      deliver(kind, to: recipient)
    case .adoptReaderDelegate(let id):
      switch entries[id]?.callbacks {
      case .connect(let delegate, _), .launch(let delegate, _): readerDelegate = delegate
      default: preconditionFailure("only a connect or a launch has a reader delegate")
      }
    case .openReconnectHandle(let handle):
      let cancelable = Cancelable { [scheduler] in scheduler.execute { self.feed(.cancelReconnect(handle: handle)) } }
      reconnection = (handle, cancelable)
    case .closeReconnectHandle(let handle, let canceled):
      guard let current = reconnection, current.handle == handle else { return }
      reconnection = nil
      executor { current.cancelable.finish(canceled: canceled) }
    case .complete(let id, let result):
      guard let entry = entries.removeValue(forKey: id) else { return }
      executor {
        switch entry.callbacks {
        case .discover(_, let completion): completion(result.failure)
        case .command(let completion): completion(result.failure)
        case .launch(_, let completion): completion(result)
        case .connect(_, let completion):
          switch result {
          case .success(let reader?): completion(.success(reader))
          case .failure(let error): completion(.failure(error))
          case .success(nil): preconditionFailure("a connect succeeds with its reader")
          }
        }
        entry.cancelable?.finish(canceled: TerminalStateMachine.wasCanceled(result))
      }
    }
  }

  /// Calls the delegate method `kind` mirrors on `recipient`.
  private func deliver(_ kind: TerminalEvent.Kind, to recipient: TerminalStateMachine.Recipient) {
    switch recipient {
    case .stream:
      return
    case .terminalDelegate:
      guard case .didChangeConnectionStatus(let status) = kind else {
        preconditionFailure("\(kind) is not a TerminalDelegate call")
      }
      guard let terminal, let delegate = terminal.delegate else { return }
      executor { delegate.terminal(terminal, didChangeConnectionStatus: status) }
    case .discoveryDelegate(let id):
      // The app let go of its terminal while a discovery ran: the delegate method takes the terminal,
      // so there is nothing to call (the engine runs on while the scheduler holds its timers).
      guard let terminal else { return }
      guard case .discover(let delegate, _) = entries[id]?.callbacks,
        case .didUpdateDiscoveredReaders(let readers) = kind
      else { preconditionFailure("a discovery update goes to the discovery delegate of a running discovery") }
      executor { delegate.terminal(terminal, didUpdateDiscoveredReaders: readers) }
    case .readerDelegate:
      guard let delegate = readerDelegate else { return }
      let reconnecting = reconnection?.cancelable
      let installing = installation?.cancelable
      if case .didStartReconnect = kind, reconnecting == nil {
        preconditionFailure("the machine opens a reconnection's handle before it reports it")
      }
      executor {
        switch kind {
        case .didStartReconnect(let reader, let reason):
          if let reconnecting { delegate.reader(reader, didStartReconnect: reconnecting, disconnectReason: reason) }
        case .readerDidSucceedReconnect(let reader): delegate.readerDidSucceedReconnect(reader)
        case .readerDidFailReconnect(let reader, _): delegate.readerDidFailReconnect(reader)
        case .didDisconnect(let reader, let reason): delegate.reader(reader, didDisconnect: reason)
        case .readerDidReportLowBatteryWarning(let reader): delegate.readerDidReportLowBatteryWarning(reader)
        case .didReportAvailableUpdate(let reader, let update):
          delegate.reader(reader, didReportAvailableUpdate: update)
        case .didStartInstallingUpdate(let reader, let update, let cancelable):
          delegate.reader(reader, didStartInstallingUpdate: update, cancelable: cancelable ? installing : nil)
        case .didReportReaderSoftwareUpdateProgress(let reader, let progress):
          delegate.reader(reader, didReportReaderSoftwareUpdateProgress: Float(progress))
        case .didFinishInstallingUpdate(let reader, let update, let error):
          delegate.reader(reader, didFinishInstallingUpdate: update, error: error)
        case .didReportBatteryLevel(let reader):
          guard let level = reader.batteryLevel, let charging = reader.isCharging else {
            preconditionFailure("a battery report carries the reading it reports")
          }
          delegate.reader(
            reader, didReportBatteryLevel: Float(level), status: reader.batteryStatus, isCharging: charging)
        default:
          preconditionFailure("\(kind) is not a MobileReaderDelegate call")
        }
      }
    }
  }

  /// The catalog the machine asks about updates; it asks only when the terminal has one.
  private static func catalog(_ catalog: (any UpdateCatalog)?) throws(ReaderError) -> any UpdateCatalog {
    guard let catalog else { preconditionFailure("updates are checked only on a terminal with a catalog") }
    return catalog
  }

  private func publish(_ kind: TerminalEvent.Kind) {
    observers.notify(TerminalEvent(time: scheduler.elapsed, kind: kind))
  }
}
