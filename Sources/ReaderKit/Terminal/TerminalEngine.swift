import Synchronization

/// The terminal's driver: owns the state machines, performs their actions, calls delegates.
///
/// Confinement: every method runs on `scheduler` (submitted through `Terminal`), one at a time,
/// which is what makes it `@unchecked Sendable`. It never blocks and never calls into the central
/// from an event handler re-entrantly (the central queues its answers).
final class TerminalEngine: @unchecked Sendable {
  typealias JobID = UInt64

  struct DiscoverJob {
    var configuration: any DiscoveryConfiguration
    var delegate: any DiscoveryDelegate
    var completion: @Sendable (ReaderError?) -> Void
  }

  struct ConnectJob {
    var reader: Reader
    var configuration: BluetoothConnectionConfiguration
    var completion: @Sendable (Result<Reader, ReaderError>) -> Void
  }

  struct LaunchJob {
    var configuration: BluetoothConnectionConfiguration?
    var makeConfiguration: @Sendable (SavedReader) throws(ReaderError) -> BluetoothConnectionConfiguration
    var timeout: Duration
    var saved: SavedReader?
    var completion: @Sendable (Result<Reader?, ReaderError>) -> Void
  }

  enum Job {
    case discover(DiscoverJob)
    case connect(ConnectJob)
    case disconnect(@Sendable (ReaderError?) -> Void)
    case reboot(@Sendable (ReaderError?) -> Void)
    case launch(LaunchJob)

    var connectJob: ConnectJob? {
      if case .connect(let job) = self { return job }
      return nil
    }

    var name: String {
      switch self {
      case .discover: "discoverReaders"
      case .connect: "connectReader"
      case .disconnect: "disconnectReader"
      case .reboot: "rebootReader"
      case .launch: "reconnectToSavedReader"
      }
    }
  }

  private struct Entry {
    var job: Job
    var cancelable: Cancelable?
  }

  private enum TimerKey: Hashable {
    case discovery(DiscoveryStateMachine.Timer)
    case link(ConnectionStateMachine.Timer)
    case launchTimeout
    /// How long a connect listens for a reader last heard too long ago.
    case locate
  }

  private struct ActiveDiscovery {
    var owner: JobID
    var machine: DiscoveryStateMachine
  }

  /// A connect to a reader discovered earlier but not heard lately: the terminal scans until it
  /// hears the reader again (then connects) or the staleness window passes (then `readerNotFound`).
  private struct Locating {
    var owner: JobID
    var reader: Reader
    var configuration: BluetoothConnectionConfiguration
  }

  private struct ActiveLink {
    var machine: ConnectionStateMachine
    /// The reader this link is for; the machine forgets it as soon as a connection fails or ends.
    var reader: Reader
    var configuration: BluetoothConnectionConfiguration
    /// The job waiting for the first connection (a connect or a launch reconnect).
    var owner: JobID?
    var reconnect: Cancelable?
    var reconnectCanceled = false
  }

  /// What other threads may read without hopping onto the scheduler.
  struct Snapshot {
    var status = ConnectionStatus.notConnected
    var connectedReader: Reader?
  }

  let scheduler: any Scheduler
  let central: any BluetoothCentral
  let store: any ReaderStore
  let tuning: DiscoveryTuning
  let snapshot = Mutex(Snapshot())
  private let observers = Mutex<[UInt64: @Sendable (TerminalEvent) -> Void]>([:])
  private let observerCounter = Mutex<UInt64>(0)
  weak var terminal: Terminal?

  private var random: SeededRandom
  private var queue = CommandQueue<JobID>()
  private var entries: [JobID: Entry] = [:]
  private var discovery: ActiveDiscovery?
  private var link: ActiveLink?
  private var locating: Locating?
  private var timers: [TimerKey: ScheduledWork] = [:]
  private var lastSeen: [String: Duration] = [:]
  private var publishedStatus = ConnectionStatus.notConnected
  /// Set from the moment a step decides to connect (a connect ending a discovery, a launch that found
  /// its reader, a listened-for reader heard again) until the connect starts, so the status goes
  /// straight to `connecting` instead of passing through `notConnected`.
  private var connectPending = false
  /// How deep the engine is in performing one batch of state-machine actions, and the commands that
  /// finished inside it: the next command starts only once the whole batch is done, so it sees the
  /// state the batch leaves (a reconnection that holds the line), not a state half-way through it.
  private var batchDepth = 0
  private var finishedInBatch: [JobID] = []
  /// Whether a reconnection ended inside the batch, so the held line opens at its end.
  private var releaseInBatch = false
  /// A reboot that was accepted (its completion has run) and keeps its place at the head of the
  /// line until the reader drops the link, so commands queued behind it see the reconnection (or
  /// the disconnect) rather than a reader that is connected but about to go.
  private var acceptedReboot: JobID?

  init(
    scheduler: any Scheduler, central: any BluetoothCentral, store: any ReaderStore, tuning: DiscoveryTuning,
    seed: UInt64
  ) {
    self.scheduler = scheduler
    self.central = central
    self.store = store
    self.tuning = tuning
    self.random = SeededRandom(seed: seed)
  }

  // MARK: Observers (any thread)

  func addObserver(_ observer: @escaping @Sendable (TerminalEvent) -> Void) -> UInt64 {
    let id = observerCounter.withLock { value -> UInt64 in
      defer { value += 1 }
      return value
    }
    observers.withLock { $0[id] = observer }
    return id
  }

  func removeObserver(_ id: UInt64) {
    _ = observers.withLock { $0.removeValue(forKey: id) }
  }

  // MARK: Commands (on the scheduler)

  func submit(_ id: JobID, _ job: Job, cancelable: Cancelable?) {
    entries[id] = Entry(job: job, cancelable: cancelable)
    let start: CommandQueue<JobID>.Start
    if let connect = job.connectJob, let running = queue.running, isDiscoveryJob(running) {
      // Connecting to a discovered reader ends the discovery; a scan without a timeout would otherwise
      // hold the connect forever. With no reader connected the connect goes before queued commands;
      // with one connected it keeps its place (a queued disconnect may come first), and if nothing
      // does, it fails at once with `alreadyConnected`.
      start = link == nil ? queue.submitFirst(id) : queue.submit(id)
      endDiscoveryForConnect(to: connect.reader)
    } else {
      start = queue.submit(id)
    }
    if case .start(let next) = start {
      begin(next)
    } else if entries[id] != nil, queue.running != id {
      publish(.didQueueCommand(command: job.name, position: queue.waitingCount))
    }
  }

  func cancel(_ id: JobID) {
    switch queue.remove(id) {
    case .removedWaiting:
      complete(id, canceledWith: ReaderError.canceled(entries[id]?.job.name ?? "command"))
    case .running:
      guard let entry = entries[id] else { return }
      switch entry.job {
      case .discover:
        finishDiscovery(ReaderError.canceled("discoverReaders"))
      case .connect, .launch:
        if let discovery, discovery.owner == id {
          finishDiscovery(ReaderError.canceled("reconnectToSavedReader"))
        } else if locating?.owner == id {
          failLocating(ReaderError.canceled(entry.job.name))
        } else if link?.owner == id, let actions = link?.machine.cancelConnect() {
          perform(actions)
        }
      case .disconnect, .reboot:
        break  // Already sent to the reader: they run to the end, and the cancel waits for it.
      }
    case .unknown:
      break
    }
  }

  /// Cancels the reconnection `handle` was given for; a handle of a reconnection that has ended
  /// (succeeded, then the reader dropped again) must not stop the next one.
  func cancelReconnect(_ handle: Cancelable) {
    guard link?.reconnect === handle, link?.machine.isReconnecting == true,
      let actions = link?.machine.cancelReconnect()
    else { return }
    link?.reconnectCanceled = true
    perform(actions)
  }

  // MARK: Central events (on the scheduler)

  func handle(_ event: BluetoothEvent) {
    let now = scheduler.elapsed
    switch event {
    case .radioStateChanged(let on):
      if !on, discovery != nil {
        finishDiscovery(ReaderError(.bluetoothDisabled, "Bluetooth was turned off during discovery"))
      }
      if !on, let located = locating {
        failLocating(
          ReaderError(
            .bluetoothDisabled, "Bluetooth was turned off before the reader was heard",
            context: ["serialNumber": located.reader.serialNumber]))
      }
      if let actions = link?.machine.radio(isPoweredOn: on) { perform(actions) }
    case .advertisement(let advertisement):
      lastSeen[advertisement.serialNumber] = now
      discovery?.machine.advertisement(advertisement, now: now)
      if let located = locating, located.reader.serialNumber == advertisement.serialNumber {
        connectPending = true
        stopLocating()
        startConnect(owner: located.owner, reader: located.reader, configuration: located.configuration)
      }
    case .didConnect(let serial, let info):
      if let actions = link?.machine.linkUp(serialNumber: serial, info: info) {
        perform(actions)
      } else {
        central.disconnect(serialNumber: serial)
      }
    case .didFailToConnect(let serial, let error):
      if let actions = link?.machine.linkFailed(serialNumber: serial, error: error) { perform(actions) }
    case .didDisconnect(let serial, let reason):
      let radioOn = central.isPoweredOn
      if let actions = link?.machine.linkDown(serialNumber: serial, reason: reason, isRadioOn: radioOn) {
        perform(actions)
      }
    case .batteryDidChange(let serial, let level, let charging):
      if let actions = link?.machine.battery(serialNumber: serial, level: level, isCharging: charging) {
        perform(actions)
      }
    case .rebootResponse(let serial, let error):
      if let actions = link?.machine.rebootResponse(serialNumber: serial, error: error) { perform(actions) }
    }
    refreshStatus()
  }

  // MARK: Running jobs

  private func isDiscoveryJob(_ id: JobID) -> Bool {
    if case .discover = entries[id]?.job { return true }
    return false
  }

  private func begin(_ id: JobID) {
    guard let entry = entries[id] else { return }
    switch entry.job {
    case .discover(let job):
      startDiscovery(owner: id, method: job.configuration.method, simulated: job.configuration.simulated)
      // A connect issued while this discovery still waited its turn ends it as it starts; a scan
      // without a timeout would otherwise hold the connect forever.
      if let connect = queue.waitingIDs.lazy.compactMap({ self.entries[$0]?.job.connectJob }).first {
        endDiscoveryForConnect(to: connect.reader)
      }
    case .connect(let job):
      startConnect(owner: id, reader: job.reader, configuration: job.configuration)
    case .disconnect:
      sendToLink(id) { $0.disconnect() }
    case .reboot:
      sendToLink(id) { $0.reboot() }
    case .launch(var job):
      let saved: SavedReader?
      do {
        saved = try store.loadLastReader()
      } catch {
        return fail(id, error)
      }
      guard let saved else {
        publish(.didFindNoSavedReader)
        return finishLaunch(id, .success(nil))
      }
      do {
        job.configuration = try job.makeConfiguration(saved)
      } catch {
        return fail(id, error)
      }
      job.saved = saved
      entries[id]?.job = .launch(job)
      publish(.didStartLaunchReconnect(serialNumber: saved.serialNumber))
      if link != nil {
        return fail(
          id,
          ReaderError(.alreadyConnected, "a reader is already connected", context: ["serialNumber": saved.serialNumber])
        )
      }
      arm(.launchTimeout, after: job.timeout)
      startDiscovery(owner: id, method: .bluetoothScan(timeout: nil), simulated: saved.simulated)
    }
    refreshStatus()
  }

  /// Runs a short command (disconnect, reboot) on the link's machine; the machine is only changed
  /// when it accepts the command.
  private func sendToLink(
    _ id: JobID,
    _ command: (inout ConnectionStateMachine) -> Result<[ConnectionStateMachine.Action], ReaderError>
  ) {
    guard var machine = link?.machine else { return fail(id, notConnected()) }
    switch command(&machine) {
    case .success(let actions):
      link?.machine = machine
      perform(actions)
    case .failure(let error):
      fail(id, error)
    }
  }

  /// Ends the running discovery because a connect to `reader` was issued. When the connect is about
  /// to start (no reader connected, and `reader` was heard) the status goes from discovering straight
  /// to connecting, and the discovery's completion already reads `connecting`.
  private func endDiscoveryForConnect(to reader: Reader) {
    connectPending = link == nil && lastSeen[reader.serialNumber] != nil
    finishDiscovery(nil)
    connectPending = false
    refreshStatus()
  }

  private func startDiscovery(owner: JobID, method: DiscoveryMethod, simulated: Bool) {
    var machine = DiscoveryStateMachine(method: method, tuning: tuning, simulated: simulated)
    let actions = machine.start(radioOn: central.isPoweredOn)
    discovery = ActiveDiscovery(owner: owner, machine: machine)
    perform(actions)
  }

  private func startConnect(owner: JobID, reader: Reader, configuration: BluetoothConnectionConfiguration) {
    connectPending = false
    if let connected = link {
      return fail(
        owner,
        ReaderError(
          .alreadyConnected, "a reader is already connected; disconnect it first",
          context: ["status": connected.machine.status.rawValue, "serialNumber": reader.serialNumber]))
    }
    guard let seen = lastSeen[reader.serialNumber] else {
      return fail(
        owner,
        ReaderError(
          .readerNotFound, "the reader was never discovered; discover it first",
          context: ["serialNumber": reader.serialNumber]))
    }
    if scheduler.elapsed - seen >= tuning.stalenessWindow, central.isPoweredOn {
      // Discovered a while ago: listen for it before opening a link to something that may be gone.
      locating = Locating(owner: owner, reader: reader, configuration: configuration)
      central.startScan()
      arm(.locate, after: tuning.stalenessWindow)
      return refreshStatus()
    }
    var machine = ConnectionStateMachine(
      autoReconnect: configuration.autoReconnectOnUnexpectedDisconnect, policy: configuration.reconnectPolicy,
      connectTimeout: configuration.connectTimeout, random: SeededRandom(seed: random.next()))
    switch machine.connect(reader, locationId: configuration.locationId) {
    case .success(let actions):
      link = ActiveLink(machine: machine, reader: reader, configuration: configuration, owner: owner)
      perform(actions)
    case .failure(let error):
      fail(owner, error)
    }
  }

  private func stopLocating() {
    guard locating != nil else { return }
    locating = nil
    disarm(.locate)
    if discovery == nil { central.stopScan() }
    refreshStatus()
  }

  /// Ends a listening connect with `error`.
  private func failLocating(_ error: ReaderError) {
    guard let located = locating else { return }
    stopLocating()
    fail(located.owner, error)
  }

  private func finishDiscovery(_ error: ReaderError?) {
    guard let actions = discovery?.machine.finish(error) else { return }
    perform(actions)
  }

  private func notConnected() -> ReaderError {
    ReaderError(.notConnected, "no reader is connected", context: ["status": publishedStatus.rawValue])
  }

  // MARK: Performing actions

  private func perform(_ actions: [DiscoveryStateMachine.Action]) {
    inBatch { run(actions) }
  }

  private func run(_ actions: [DiscoveryStateMachine.Action]) {
    let owner = discovery?.owner
    for action in actions {
      // A report can end the discovery (a launch found its reader): what the batch still holds
      // (the next tick's timer) belongs to a discovery that is over.
      guard let current = discovery, current.owner == owner else { break }
      switch action {
      case .startScan: central.startScan()
      case .stopScan: central.stopScan()
      case .arm(let timer, let delay): arm(.discovery(timer), after: delay)
      case .disarm(let timer): disarm(.discovery(timer))
      case .flashLEDs(let serial):
        central.flashLEDs(serialNumber: serial)
        publish(.didRequestLEDFlash(serialNumber: serial))
      case .report(let readers):
        discoveryReported(readers)
      case .finish(let error):
        guard let finished = discovery else { continue }
        discovery = nil
        // The completion may read `connectionStatus`: it must no longer say `discovering`.
        refreshStatus()
        publish(.didFinishDiscovery(error))
        discoveryFinished(owner: finished.owner, error: error)
      }
    }
    refreshStatus()
  }

  private func discoveryReported(_ readers: [Reader]) {
    guard let owner = discovery?.owner, let entry = entries[owner] else { return }
    publish(.didUpdateDiscoveredReaders(readers))
    switch entry.job {
    case .discover(let job):
      if let terminal { job.delegate.terminal(terminal, didUpdateDiscoveredReaders: readers) }
    case .launch(let job):
      guard let saved = job.saved, let configuration = job.configuration,
        var reader = readers.first(where: { $0.serialNumber == saved.serialNumber })
      else { return }
      reader.simulated = reader.simulated || discovery?.machine.simulated == true
      publish(.didFindSavedReader(reader))
      connectPending = true
      finishDiscovery(nil)
      startConnect(owner: owner, reader: reader, configuration: configuration)
    default:
      break
    }
  }

  private func discoveryFinished(owner: JobID, error: ReaderError?) {
    guard let entry = entries[owner] else { return }
    switch entry.job {
    case .discover(let job):
      removeEntry(owner)
      job.completion(error)
      entry.cancelable?.completed(canceled: error?.code == .canceled)
      finishCommand(owner)
    case .launch:
      // Success means the saved reader was found and the connect has started; only errors end it.
      if let error { finishLaunch(owner, .failure(error)) }
    default:
      break
    }
  }

  private func perform(_ actions: [ConnectionStateMachine.Action]) {
    inBatch { run(actions) }
  }

  private func run(_ actions: [ConnectionStateMachine.Action]) {
    for action in actions {
      switch action {
      case .openLink(let serial): central.connect(serialNumber: serial)
      case .abandonLink(let serial): central.cancelConnect(serialNumber: serial)
      case .closeLink(let serial): central.disconnect(serialNumber: serial)
      case .sendReboot(let serial): central.reboot(serialNumber: serial)
      case .arm(let timer, let delay): arm(.link(timer), after: delay)
      case .disarm(let timer): disarm(.link(timer))
      case .connected(let reader):
        connected(reader)
      case .connectFailed(let error):
        let owner = link?.owner
        let serial = link?.reader.serialNumber ?? ""
        link = nil
        refreshStatus()
        publish(.didFailToConnect(serialNumber: serial, error: error))
        if let owner { finishConnectOwner(owner, .failure(error)) }
      case .disconnectCompleted(let reader):
        link = nil
        refreshStatus()
        publish(.didDisconnect(reader, reason: .disconnectRequested))
        finishShortCommand(where: { if case .disconnect = $0 { true } else { false } }, error: nil)
      case .rebootAnswered(let error):
        publish(.didRespondToReboot(serialNumber: link?.reader.serialNumber ?? "", error: error))
        if error == nil, let id = queue.running, let entry = entries[id], case .reboot(let completion) = entry.job {
          removeEntry(id)
          acceptedReboot = id
          completion(nil)
          entry.cancelable?.completed(canceled: false)
        } else {
          finishShortCommand(where: { if case .reboot = $0 { true } else { false } }, error: error)
        }
      case .rebootNotCarriedOut:
        releaseAcceptedReboot()
      case .reconnectStarted(let reader, let reason):
        releaseInBatch = false
        queue.hold()
        let cancelable = Cancelable(onCancelOf: { [self] handle in scheduler.execute { self.cancelReconnect(handle) } })
        link?.reconnect = cancelable
        link?.reconnectCanceled = false
        refreshStatus()
        publish(.didStartReconnect(reader, reason: reason))
        link?.configuration.delegate.reader(reader, didStartReconnect: cancelable, disconnectReason: reason)
        releaseAcceptedReboot()
      case .reconnectSucceeded(let reader):
        refreshStatus()
        publish(.readerDidSucceedReconnect(reader))
        link?.configuration.delegate.readerDidSucceedReconnect(reader)
        link?.reconnect?.completed(canceled: false)
        link?.reconnect = nil
        releaseQueue()
      case .reconnectFailed(let reader, let error):
        publish(.readerDidFailReconnect(reader, error: error))
        link?.configuration.delegate.readerDidFailReconnect(reader)
      case .disconnected(let reader, let reason):
        let ended = link
        link = nil
        for key in timers.keys { if case .link = key { disarm(key) } }
        refreshStatus()
        publish(.didDisconnect(reader, reason: reason))
        ended?.configuration.delegate.reader(reader, didDisconnect: reason)
        ended?.reconnect?.completed(canceled: ended?.reconnectCanceled ?? false)
        if ended?.reconnect != nil { releaseQueue() }
        // A reboot that never got its answer must still complete.
        finishShortCommand(where: { if case .reboot = $0 { true } else { false } }, error: notConnected())
        releaseAcceptedReboot()
      case .lowBatteryWarning(let reader):
        publish(.readerDidReportLowBatteryWarning(reader))
        link?.configuration.delegate.readerDidReportLowBatteryWarning(reader)
      case .readerUpdated(let reader):
        refreshStatus()
        publish(.didReportBatteryLevel(reader))
        link?.configuration.delegate.reader(
          reader, didReportBatteryLevel: reader.batteryLevel ?? 0, status: reader.batteryStatus,
          isCharging: reader.isCharging ?? false)
      }
    }
    refreshStatus()
  }

  private func connected(_ reader: Reader) {
    let owner = link?.owner
    link?.owner = nil
    refreshStatus()
    publish(.didConnect(reader))
    let saved = SavedReader(
      serialNumber: reader.serialNumber, locationId: reader.locationId ?? "", deviceType: reader.deviceType,
      simulated: reader.simulated)
    do {
      try store.saveLastReader(saved)
      publish(.didSaveReader(serialNumber: reader.serialNumber, error: nil))
    } catch {
      // The connection stands; only reconnect-at-launch is affected. Say so on the stream.
      publish(.didSaveReader(serialNumber: reader.serialNumber, error: error))
    }
    if let owner { finishConnectOwner(owner, .success(reader)) }
  }

  private func finishConnectOwner(_ owner: JobID, _ result: Result<Reader, ReaderError>) {
    guard let entry = entries[owner] else { return }
    switch entry.job {
    case .connect(let job):
      removeEntry(owner)
      job.completion(result)
      entry.cancelable?.completed(canceled: isCanceled(result))
      finishCommand(owner)
    case .launch:
      finishLaunch(owner, result.map { $0 })
    default:
      break
    }
  }

  private func finishLaunch(_ owner: JobID, _ result: Result<Reader?, ReaderError>) {
    guard let entry = entries[owner], case .launch(let job) = entry.job else { return }
    // Removed before its discovery is ended: ending it reports back here (`discoveryFinished`), and
    // that report must find the job already finished.
    removeEntry(owner)
    disarm(.launchTimeout)
    if discovery?.owner == owner { finishDiscovery(result.failure) }
    publish(.didFinishLaunchReconnect(result.failure))
    job.completion(result)
    entry.cancelable?.completed(canceled: result.failure?.code == .canceled)
    finishCommand(owner)
  }

  private func finishShortCommand(where matches: (Job) -> Bool, error: ReaderError?) {
    guard let id = queue.running, let entry = entries[id], matches(entry.job) else { return }
    removeEntry(id)
    switch entry.job {
    case .disconnect(let completion), .reboot(let completion): completion(error)
    default: break
    }
    entry.cancelable?.completed(canceled: false)
    finishCommand(id)
  }

  private func releaseAcceptedReboot() {
    guard let id = acceptedReboot else { return }
    acceptedReboot = nil
    finishCommand(id)
  }

  private func fail(_ id: JobID, _ error: ReaderError) {
    guard entries[id] != nil else { return }
    refreshStatus()  // The completion reads the status the failure leaves, not a pending connect's.
    if case .launch = entries[id]?.job { return finishLaunch(id, .failure(error)) }
    complete(id, canceledWith: error)
    finishCommand(id)
  }

  /// Completes a job that never ran (or failed at its start) with `error`.
  private func complete(_ id: JobID, canceledWith error: ReaderError) {
    guard let entry = removeEntry(id) else { return }
    switch entry.job {
    case .discover(let job): job.completion(error)
    case .connect(let job): job.completion(.failure(error))
    case .disconnect(let completion), .reboot(let completion): completion(error)
    case .launch(let job):
      publish(.didFinishLaunchReconnect(error))
      job.completion(.failure(error))
    }
    entry.cancelable?.completed(canceled: error.code == .canceled)
  }

  @discardableResult
  private func removeEntry(_ id: JobID) -> Entry? {
    entries.removeValue(forKey: id)
  }

  /// Marks `id` done; the next command starts now, or at the end of the batch being performed.
  private func finishCommand(_ id: JobID) {
    if batchDepth > 0 {
      finishedInBatch.append(id)
    } else {
      advance(queue.finish(id))
    }
  }

  /// Runs one batch of actions, then starts what the commands finished in it let through.
  private func inBatch(_ body: () -> Void) {
    batchDepth += 1
    body()
    batchDepth -= 1
    guard batchDepth == 0 else { return }
    if releaseInBatch {
      releaseInBatch = false
      advance(queue.release())
    }
    while !finishedInBatch.isEmpty {
      advance(queue.finish(finishedInBatch.removeFirst()))
    }
  }

  /// Opens the line held during a reconnection, now or at the end of the batch being performed.
  private func releaseQueue() {
    if batchDepth > 0 {
      releaseInBatch = true
    } else {
      advance(queue.release())
    }
  }

  private func advance(_ start: CommandQueue<JobID>.Start) {
    if case .start(let next) = start { begin(next) }
  }

  private func isCanceled(_ result: Result<Reader, ReaderError>) -> Bool {
    if case .failure(let error) = result { return error.code == .canceled }
    return false
  }

  // MARK: Timers

  /// The timers the engine keeps right now (for tests: none may outlive the work they time).
  var armedTimers: [String] { timers.keys.map { "\($0)" }.sorted() }

  private func arm(_ key: TimerKey, after delay: Duration) {
    disarm(key)
    timers[key] = scheduler.schedule(after: delay) { [self] in fire(key) }
  }

  private func disarm(_ key: TimerKey) {
    if let work = timers.removeValue(forKey: key) { scheduler.cancel(work) }
  }

  private func fire(_ key: TimerKey) {
    guard timers.removeValue(forKey: key) != nil else { return }
    switch key {
    case .discovery(let timer):
      if let actions = discovery?.machine.timerFired(timer, now: scheduler.elapsed) { perform(actions) }
    case .link(let timer):
      if let actions = link?.machine.timerFired(timer) { perform(actions) }
    case .locate:
      guard let located = locating else { return }
      failLocating(
        ReaderError(
          .readerNotFound, "the reader is no longer advertising; discover it again",
          context: [
            "serialNumber": located.reader.serialNumber, "listened": tuning.stalenessWindow.formattedSeconds,
          ]))
    case .launchTimeout:
      guard let owner = discovery?.owner, case .launch(let job) = entries[owner]?.job else { return }
      finishLaunch(
        owner,
        .failure(
          ReaderError(
            .readerNotFound, "the saved reader was not found before the timeout",
            context: ["serialNumber": job.saved?.serialNumber ?? "", "timeout": job.timeout.formattedSeconds])))
    }
  }

  // MARK: Publishing

  private func refreshStatus() {
    let linkStatus = link?.machine.status ?? (locating != nil || connectPending ? .connecting : .notConnected)
    let status: ConnectionStatus = linkStatus == .notConnected && discovery != nil ? .discovering : linkStatus
    let reader = link?.machine.connectedReader
    snapshot.withLock {
      $0.status = status
      $0.connectedReader = reader
    }
    if status != publishedStatus {
      publishedStatus = status
      publish(.didChangeConnectionStatus(status))
    }
  }

  private func publish(_ kind: TerminalEvent.Kind) {
    let event = TerminalEvent(time: scheduler.elapsed, kind: kind)
    let current = observers.withLock { $0.sorted { $0.key < $1.key }.map(\.value) }
    for observer in current { observer(event) }
  }
}

extension Result {
  fileprivate var failure: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
