#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The whole terminal as one pure machine: the command line-up, discovery, the reader link, reconnect
/// at launch, persistence and the connection status, composed in one place that alone decides the
/// order of everything.
///
/// The driver (`TerminalEngine`) feeds every input — a command, a cancel, a Bluetooth or reader-link
/// event, a timer, the result of a store read or write — into `handle(_:now:radioOn:)` and performs
/// the actions that come back, in order; it decides nothing. Rules that span lifecycles live here:
/// - Commands run one at a time in FIFO order (`CommandQueue`); the next one starts only once the
///   input being handled is fully processed, so it sees the state the input leaves (a reconnection
///   that holds the line), never a state half-way through it.
/// - A connect ends a running discovery (success) and, with no reader connected, goes before the
///   commands queued behind that discovery; a discovery that starts with a connect waiting behind it
///   ends at once. While it moves from one to the other the status reads `connecting`, never
///   `notConnected` in between.
/// - Automatic reconnection holds the line: queued commands wait until it succeeds or fails.
/// - An accepted reboot keeps the line until the reader drops the link (or keeps it past the reply
///   timeout), so a command queued behind it sees the reconnection or the disconnect.
/// - A successful first connection is saved for reconnect at launch; the connect completes once the
///   store has answered (`didSaveReader` first).
/// - The status is derived from the link, a pending connect and the discovery in one place, and
///   published before any completion or delegate call that may read it.
/// - Software updates (with a catalog or a test update): a link that comes up is prepared before the
///   reader counts as connected — its software checked and a required update installed
///   (`UpdateInstallStateMachine`, `UpdatePolicy`) — so the connect completes after
///   `didFinishInstallingUpdate`, and a reader lost during an install is never reported connected.
///   An optional update is reported after `didConnect` and kept on the reader; the catalog is asked
///   again every `updateCheckInterval` while the reader is connected and the line is idle.
package struct TerminalStateMachine {
  package typealias JobID = UInt64

  /// A command as the machine sees it: values only (completions and delegates stay with the driver).
  package enum Command: Equatable, Sendable {
    case discover(DiscoveryMethod, simulated: Bool)
    case connect(Reader, ConnectionSettings)
    case disconnect
    case reboot
    case launch(timeout: Duration, autoReconnect: Bool)
    case installUpdate

    /// The API name, for events and errors.
    package var name: String {
      switch self {
      case .discover: "discoverReaders"
      case .connect: "connectReader"
      case .disconnect: "disconnectReader"
      case .reboot: "rebootReader"
      case .launch: "reconnectToSavedReader"
      case .installUpdate: "installAvailableUpdate"
      }
    }
  }

  /// Every timer the terminal keeps, named after the machine that asked for it.
  package enum Timer: Hashable, Sendable, CustomStringConvertible {
    case discovery(DiscoveryStateMachine.Timer)
    case link(ConnectionStateMachine.Timer)
    case launchTimeout
    case install(UpdateInstallStateMachine.Timer)
    /// The next look at the catalog while a reader is connected.
    case updateCheck

    package var description: String {
      switch self {
      case .discovery(let timer): "discovery(\(timer))"
      case .link(let timer): "link(\(timer))"
      case .launchTimeout: "launchTimeout"
      case .install(let timer): "install(\(timer))"
      case .updateCheck: "updateCheck"
      }
    }
  }

  /// Who hears of an event besides the event stream.
  package enum Recipient: Equatable, Sendable {
    /// Only the event stream.
    case stream
    /// The discovery delegate of command `JobID`.
    case discoveryDelegate(JobID)
    /// The `MobileReaderDelegate` of the current connection.
    case readerDelegate
    /// The terminal's own delegate (`TerminalDelegate`).
    case terminalDelegate
  }

  package enum Input: Sendable {
    /// The app issued a command.
    case submit(JobID, Command)
    /// The app cancelled a command (waiting or running).
    case cancel(JobID)
    /// The app cancelled the reconnection that `handle` was given for.
    case cancelReconnect(handle: UInt64)
    /// The Bluetooth radio reported something.
    case bluetooth(BluetoothEvent)
    /// A reader reported something over its link.
    case readerLink(ReaderLinkEvent)
    /// A timer the machine armed fired.
    case timerFired(Timer)
    /// The store answered `loadSavedReader`.
    case savedReaderLoaded(Result<SavedReader?, ReaderError>)
    /// The store answered `saveReader`.
    case readerSaved(serialNumber: String, error: ReaderError?)
    /// The catalog answered `checkForUpdate` number `request`.
    case updateChecked(request: UInt64, Result<UpdateAvailability, ReaderError>)
    /// The catalog answered `fetchImage` number `request`: the verified image, or why there is none.
    case imageFetched(request: UInt64, Result<Data, ReaderError>)
    /// The app cancelled the install that `handle` was given for.
    case cancelInstall(handle: UInt64)
    /// The update every connection to a simulated reader sees unless its configuration names a test
    /// update of its own (the simulator configuration's `availableReaderUpdate`); nil for the catalog's.
    case simulatedReaderUpdate(TestReaderUpdate?)
  }

  package enum Action: Equatable, Sendable {
    // The radio.
    case startScan
    case stopScan
    case openLink(serialNumber: String)
    case abandonLink(serialNumber: String)
    case closeLink(serialNumber: String)
    // The reader link.
    case reboot(serialNumber: String)
    case flashLEDs(serialNumber: String)
    // Timers.
    case arm(Timer, after: Duration)
    case disarm(Timer)
    // Persistence; answered by `savedReaderLoaded` and `readerSaved`.
    case loadSavedReader
    case saveReader(SavedReader)
    // Software updates; answered by `updateChecked`, `imageFetched` and the reader's update events.
    // A request carries a number its answer repeats: an answer to a request that no longer matters
    // (the reader left, the install was cancelled) is dropped, never taken for a newer one's.
    case checkForUpdate(request: UInt64, InstalledSoftware, at: Date)
    case fetchImage(request: UInt64, FirmwareImage)
    case installUpdate(serialNumber: String, update: ReaderSoftwareUpdate, image: Data?, fault: UpdateFault?)
    case cancelUpdate(serialNumber: String)
    /// An install that can be cancelled started: create the `Cancelable` handed to
    /// `didStartInstallingUpdate` (cancelling it feeds `cancelInstall(handle:)`).
    case openInstallHandle(UInt64)
    /// The install of `handle` ended.
    case closeInstallHandle(UInt64, canceled: Bool)
    /// What `connectionStatus` and `connectedReader` read from now on.
    case status(ConnectionStatus, connectedReader: Reader?)
    /// Publish an event, and call the matching delegate method of `to`.
    case report(TerminalEvent.Kind, to: Recipient)
    /// The `MobileReaderDelegate` of command `JobID` becomes the current connection's.
    case adoptReaderDelegate(JobID)
    /// A reconnection started: create the `Cancelable` handed to `didStartReconnect` (cancelling it
    /// feeds `cancelReconnect(handle:)`).
    case openReconnectHandle(UInt64)
    /// The reconnection of `handle` ended.
    case closeReconnectHandle(UInt64, canceled: Bool)
    /// Command `JobID` is over: run its completion, then its `Cancelable`'s waiters.
    case complete(JobID, Result<Reader?, ReaderError>)
  }

  private var queue = CommandQueue<JobID>()
  /// The commands not completed yet, waiting or running.
  private var jobs: [JobID: Command] = [:]
  private var discovery: DiscoveryStateMachine
  /// The command the running discovery belongs to (a discovery or a launch).
  private var discoveryOwner: JobID?
  private var link: ConnectionStateMachine
  /// The command waiting for the link's first connection (a connect or a launch).
  private var linkOwner: JobID?
  /// The reader the link is for, from the connect until the link is given up.
  private var linkReader: Reader?
  /// The running launch.
  private var launch: (owner: JobID, machine: LaunchReconnectStateMachine)?
  /// The reconnection in progress, its handle, and whether the app cancelled it.
  private var reconnection: (handle: UInt64, canceled: Bool)?
  private var reconnectHandles: UInt64 = 0
  /// A connected reader whose connect waits for the store to save it.
  private var saving: (owner: JobID, reader: Reader)?
  /// A reboot accepted by the reader, which keeps the line until the reader drops the link.
  private var acceptedReboot: JobID?
  /// The settings of the current connection (its test update).
  private var linkSettings: ConnectionSettings?
  /// The fault a test update asks the reader to show, for the current connection.
  private var testFault: UpdateFault?
  /// What the current connection's test update resolved to, at its first preparation.
  private var testAvailability: UpdateAvailability?
  /// Software update work under way: a check, or an install.
  private var update: UpdateWork?
  private var installHandles: UInt64 = 0
  private var updateRequests: UInt64 = 0
  /// An install whose cancel the reader never confirmed: a late success from it is still believed.
  private var unconfirmedInstall: (serialNumber: String, update: ReaderSoftwareUpdate)?
  /// Whether the radio is scanning on the terminal's behalf (a discovery, or a connect listening).
  private var scanning = false
  /// A connect is about to start: the status goes straight to `connecting`.
  private var connectPending = false
  private var published = (status: ConnectionStatus.notConnected, reader: Reader?.none)
  /// The seed source of each connection's reconnection jitter.
  private var random: SeededRandom
  private let tuning: DiscoveryTuning
  private let realReadersSupported: Bool
  private let updates: UpdateSettings
  /// The update connections to simulated readers see when their configuration names none.
  private var simulatedReaderUpdate: TestReaderUpdate?

  /// How the terminal handles software updates.
  package struct UpdateSettings: Sendable {
    /// Whether a catalog answers `checkForUpdate` and `fetchImage`.
    package var hasCatalog: Bool
    /// The rules: required or optional, and the grace rule.
    package var policy: UpdatePolicy
    /// How often the catalog is asked again while a reader is connected and the line idle.
    package var checkInterval: Duration
    /// The date at the scheduler's time zero: `requiredAt` and the grace window are dates.
    package var epoch: Date

    package init(
      hasCatalog: Bool = false, policy: UpdatePolicy = UpdatePolicy(), checkInterval: Duration = .seconds(3600),
      epoch: Date = Date(timeIntervalSince1970: 1_767_225_600)
    ) {
      self.hasCatalog = hasCatalog
      self.policy = policy
      self.checkInterval = checkInterval
      self.epoch = epoch
    }
  }

  /// Why update work runs.
  private enum UpdatePurpose: Equatable {
    /// Preparing a reader whose link just came up (a connect, or the end of a reconnection).
    case preparing
    /// A look at the catalog while the reader is connected and idle.
    case idleCheck
    /// The app's `installAvailableUpdate()`, command `JobID`.
    case app(JobID)
  }

  /// Update work under way for `reader`.
  private struct UpdateWork {
    var purpose: UpdatePurpose
    var reader: Reader
    /// What the catalog (or the test update) offers, once known.
    var availability = UpdateAvailability.upToDate
    /// The install, once one runs.
    var install: UpdateInstallStateMachine?
    /// The install's `Cancelable`, when it can be cancelled.
    var handle: UInt64?
    /// The connection the install belongs to was cancelled: the link goes, nothing else follows.
    var abandoned = false
    /// The link went down: the link machine ends the connection, the install only reports it.
    var linkGone = false
    /// The catalog request whose answer the work waits for.
    var request: UInt64?
  }

  // Per input: the time, the radio, the actions so far, and what moves the line at the end.
  private var now = Duration.zero
  private var radioOn = true
  private var actions: [Action] = []
  private var finished: [JobID] = []
  private var releaseHeld = false

  /// A terminal machine. `realReadersSupported` says whether the host has a Bluetooth backend for
  /// real (non-simulated) readers; without one, discovering or connecting them fails with
  /// `bluetoothUnsupported`.
  package init(
    tuning: DiscoveryTuning = DiscoveryTuning(), seed: UInt64, realReadersSupported: Bool = true,
    updates: UpdateSettings = UpdateSettings()
  ) {
    self.tuning = tuning
    self.updates = updates
    self.discovery = DiscoveryStateMachine(tuning: tuning)
    self.link = ConnectionStateMachine(autoReconnect: true, policy: .default, random: SeededRandom(seed: seed))
    self.random = SeededRandom(seed: seed)
    self.realReadersSupported = realReadersSupported
  }

  /// The status as last published.
  package var status: ConnectionStatus { published.status }

  /// Whether the readers a scan looks for now are simulated: the running discovery's, else those of the
  /// reader a connect listens for (for a central that routes simulated and real readers apart).
  package var scanningForSimulatedReaders: Bool {
    discovery.isRunning ? discovery.simulated : (linkReader?.simulated ?? false)
  }

  /// Handles one input at `now`; `radioOn` is the host radio's state now.
  package mutating func handle(_ input: Input, now: Duration, radioOn: Bool) -> [Action] {
    if case .bluetooth(.advertisement(let advertisement)) = input {
      return self.advertisement(advertisement, now: now, radioOn: radioOn)
    }
    return process(input, now: now, radioOn: radioOn)
  }

  /// An advertisement, the input that comes thousands of times a second: one update of the sightings
  /// table and nothing else, unless a connect listens for this reader.
  package mutating func advertisement(_ advertisement: Advertisement, now: Duration, radioOn: Bool) -> [Action] {
    discovery.advertisement(advertisement, now: now)
    guard link.listeningFor == advertisement.serialNumber else { return [] }
    return process(.bluetooth(.advertisement(advertisement)), now: now, radioOn: radioOn)
  }

  private mutating func process(_ input: Input, now: Duration, radioOn: Bool) -> [Action] {
    self.now = now
    self.radioOn = radioOn
    switch input {
    case .submit(let id, let command): submit(id, command)
    case .cancel(let id): cancel(id)
    case .cancelReconnect(let handle): cancelReconnect(handle)
    case .bluetooth(let event): bluetooth(event)
    case .readerLink(let event): readerLink(event)
    case .timerFired(let timer): timerFired(timer)
    case .savedReaderLoaded(let result):
      let refusal = link.connectRefusal
      launchStep { $0.savedReaderLoaded(result, connectRefusal: refusal) }
    case .readerSaved(let serial, let error): readerSaved(serial, error)
    case .updateChecked(let request, let result):
      guard update?.request == request else { break }
      update?.request = nil
      updateChecked(result)
    case .imageFetched(let request, let result):
      guard update?.request == request else { break }
      update?.request = nil
      let now = self.now
      installStep { $0.imageFetched(result, now: now) }
    case .cancelInstall(let handle):
      guard update?.handle == handle else { break }
      installStep { $0.cancel() }
    case .simulatedReaderUpdate(let update):
      simulatedReaderUpdate = update
    }
    moveTheLine()
    connectPending = false
    syncStatus()
    defer { actions = [] }
    return actions
  }

  // MARK: Commands

  private mutating func submit(_ id: JobID, _ command: Command) {
    jobs[id] = command
    let start: CommandQueue<JobID>.Start
    if case .connect(let reader, _) = command, let running = queue.running, case .discover = jobs[running] {
      // Connecting ends the discovery; a scan without a timeout would otherwise hold the connect
      // forever. With no reader connected the connect goes before queued commands; with one
      // connected it keeps its place (a queued disconnect may come first), or fails `alreadyConnected`.
      start = link.isIdle ? queue.submitFirst(id) : queue.submit(id)
      endDiscoveryForConnect(to: reader)
    } else {
      start = queue.submit(id)
    }
    if case .start(let next) = start {
      begin(next)
    } else if jobs[id] != nil, queue.running != id {
      report(.didQueueCommand(command: command.name, position: queue.waitingCount))
    }
  }

  private mutating func cancel(_ id: JobID) {
    switch queue.remove(id) {
    case .removedWaiting:
      guard let command = jobs[id] else { return }
      let error = ReaderError.canceled(command.name)
      if case .launch = command { report(.didFinishLaunchReconnect(error)) }
      complete(id, .failure(error))
    case .running:
      guard let command = jobs[id] else { return }
      switch command {
      case .discover:
        finishDiscovery(.canceled("discoverReaders"))
      case .connect, .launch:
        if linkOwner == id {
          abandonUpdate()
          if let steps = link.cancelConnect(command.name) { runLink(steps) }
        } else if launch?.owner == id {
          launchStep { $0.cancel() }
        }
      case .disconnect, .reboot, .installUpdate:
        break  // Already sent to the reader: they run to the end (cancel an install with its own handle).
      }
    case .unknown:
      break
    }
  }

  private mutating func cancelReconnect(_ handle: UInt64) {
    guard reconnection?.handle == handle, link.isReconnecting else { return }
    abandonUpdate()
    guard let steps = link.cancelReconnect() else { return }
    reconnection?.canceled = true
    runLink(steps)
  }

  private mutating func begin(_ id: JobID) {
    guard let command = jobs[id] else { return }
    switch command {
    case .discover(let method, let simulated):
      startDiscovery(owner: id, method: method, simulated: simulated)
      // A connect issued while this discovery still waited its turn ends it as it starts.
      for waiting in queue.waitingIDs {
        if case .connect(let reader, _) = jobs[waiting] {
          endDiscoveryForConnect(to: reader)
          break
        }
      }
    case .connect(let reader, let settings):
      startConnect(owner: id, reader: reader, settings: settings)
    case .disconnect:
      sendToLink(id) { $0.disconnect() }
    case .reboot:
      sendToLink(id) { $0.reboot() }
    case .launch(let timeout, let autoReconnect):
      launch = (id, LaunchReconnectStateMachine(timeout: timeout, autoReconnect: autoReconnect))
      launchStep { $0.start() }
    case .installUpdate:
      installAvailableUpdate(id)
    }
    syncStatus()
  }

  /// Runs a short command (disconnect, reboot) on the link; the link only changes when it accepts.
  private mutating func sendToLink(
    _ id: JobID, _ command: (inout ConnectionStateMachine) -> Result<[ConnectionStateMachine.Action], ReaderError>
  ) {
    switch command(&link) {
    case .success(let steps): runLink(steps)
    case .failure(let error): fail(id, error)
    }
  }

  /// Ends the running discovery because a connect to `reader` was issued. When that connect is about
  /// to start (no reader connected, and `reader` was heard) the status goes from discovering straight
  /// to connecting, and the discovery's completion already reads `connecting`.
  private mutating func endDiscoveryForConnect(to reader: Reader) {
    connectPending = link.isIdle && discovery.freshness(of: reader.serialNumber, now: now) != .never
    finishDiscovery(nil)
  }

  private mutating func startConnect(owner: JobID, reader: Reader, settings: ConnectionSettings) {
    connectPending = false
    guard reader.simulated || realReadersSupported else {
      return fail(owner, Self.unsupported(serialNumber: reader.serialNumber))
    }
    let heard = discovery.freshness(of: reader.serialNumber, now: now)
    var settings = settings
    // A simulated reader sees the simulator's update unless the connection picked a test update itself.
    if reader.simulated, settings.testUpdate == nil { settings.testUpdate = simulatedReaderUpdate }
    settings.preparesReader = updates.hasCatalog || settings.testUpdate != nil
    let attempt = link.connect(
      reader, settings: settings, heard: heard, radioOn: radioOn, listenFor: tuning.stalenessWindow,
      random: SeededRandom(seed: random.next()))
    switch attempt {
    case .success(let steps):
      linkOwner = owner
      linkReader = reader
      linkSettings = settings
      testFault = nil
      testAvailability = nil
      emit(.adoptReaderDelegate(owner))
      runLink(steps)
    case .failure(let error):
      fail(owner, error)
    }
  }

  private mutating func fail(_ id: JobID, _ error: ReaderError) {
    guard let command = jobs[id] else { return }
    syncStatus()  // The completion reads the status the failure leaves, not a pending connect's.
    if case .launch = command, launch?.owner == id {
      return launchStep { _ in [.finish(.failure(error))] }
    }
    complete(id, .failure(error))
    finishCommand(id)
  }

  /// Runs the completion of command `id` (it leaves `jobs`; the line moves separately).
  private mutating func complete(_ id: JobID, _ result: Result<Reader?, ReaderError>) {
    jobs[id] = nil
    emit(.complete(id, result))
  }

  /// Marks `id` done; the next command starts once the current input is processed.
  private mutating func finishCommand(_ id: JobID) {
    finished.append(id)
  }

  private mutating func moveTheLine() {
    while true {
      let start: CommandQueue<JobID>.Start
      if releaseHeld {
        releaseHeld = false
        start = queue.release()
      } else if !finished.isEmpty {
        start = queue.finish(finished.removeFirst())
      } else {
        return
      }
      if case .start(let next) = start { begin(next) }
    }
  }

  // MARK: Discovery

  private mutating func startDiscovery(owner: JobID, method: DiscoveryMethod, simulated: Bool) {
    discoveryOwner = owner
    if !simulated && !realReadersSupported {
      return runDiscovery([.finish(Self.unsupported(serialNumber: nil))])
    }
    runDiscovery(discovery.start(method, simulated: simulated, radioOn: radioOn, now: now))
  }

  private mutating func finishDiscovery(_ error: ReaderError?) {
    guard discoveryOwner != nil else { return }
    runDiscovery(discovery.finish(error))
  }

  private mutating func runDiscovery(_ steps: [DiscoveryStateMachine.Action]) {
    let owner = discoveryOwner
    for step in steps {
      // A report can end the discovery (a launch found its reader): what is left of the batch (the
      // next tick's timer) belongs to a discovery that is over.
      guard let owner, discoveryOwner == owner else { break }
      switch step {
      case .startScan, .stopScan: updateScan()
      case .arm(let timer, let delay): emit(.arm(.discovery(timer), after: delay))
      case .disarm(let timer): emit(.disarm(.discovery(timer)))
      case .flashLEDs(let serial):
        emit(.flashLEDs(serialNumber: serial))
        report(.didRequestLEDFlash(serialNumber: serial))
      case .report(let readers):
        discoveryReported(readers, owner: owner)
      case .finish(let error):
        discoveryOwner = nil
        updateScan()
        // The completion may read `connectionStatus`: it must no longer say `discovering`.
        syncStatus()
        report(.didFinishDiscovery(error))
        discoveryFinished(owner: owner, error: error)
      }
    }
    syncStatus()
  }

  private mutating func discoveryReported(_ readers: [Reader], owner: JobID) {
    switch jobs[owner] {
    case .discover:
      report(.didUpdateDiscoveredReaders(readers), to: .discoveryDelegate(owner))
    case .launch:
      report(.didUpdateDiscoveredReaders(readers))
      launchStep { $0.readersReported(readers) }
    default:
      preconditionFailure("a discovery belongs to a discover or launch command")
    }
  }

  private mutating func discoveryFinished(owner: JobID, error: ReaderError?) {
    switch jobs[owner] {
    case .discover:
      complete(owner, error.map { .failure($0) } ?? .success(nil))
      finishCommand(owner)
    case .launch:
      launchStep { $0.discoveryEnded(error) }
    case nil:
      break  // A launch that already ended.
    default:
      preconditionFailure("a discovery belongs to a discover or launch command")
    }
  }

  /// Keeps the radio scanning exactly while a discovery runs or a connect listens for its reader.
  private mutating func updateScan() {
    let wanted = discovery.isRunning || link.isListening
    guard wanted != scanning else { return }
    scanning = wanted
    emit(wanted ? .startScan : .stopScan)
  }

  // MARK: Launch

  private mutating func launchStep(
    _ input: (inout LaunchReconnectStateMachine) -> [LaunchReconnectStateMachine.Action]
  ) {
    guard var current = launch else { return }
    let steps = input(&current.machine)
    launch = current
    let owner = current.owner
    for step in steps {
      switch step {
      case .loadSavedReader: emit(.loadSavedReader)
      case .report(let kind): report(kind)
      case .startDiscovery(let simulated):
        startDiscovery(owner: owner, method: .bluetoothScan(timeout: nil), simulated: simulated)
      case .stopDiscovery(let error): finishDiscovery(error)
      case .armTimeout(let timeout): emit(.arm(.launchTimeout, after: timeout))
      case .disarmTimeout: emit(.disarm(.launchTimeout))
      case .connect(let reader, let settings):
        connectPending = true
        finishDiscovery(nil)
        startConnect(owner: owner, reader: reader, settings: settings)
      case .finish(let result):
        launch = nil
        report(.didFinishLaunchReconnect(result.failure))
        complete(owner, result)
        finishCommand(owner)
      }
    }
  }

  // MARK: Link

  private mutating func bluetooth(_ event: BluetoothEvent) {
    switch event {
    case .radioStateChanged(let on):
      if !on { finishDiscovery(ReaderError(.bluetoothDisabled, "Bluetooth was turned off during discovery")) }
      runLink(link.radio(isPoweredOn: on))
    case .advertisement(let advertisement):
      runLink(link.heard(serialNumber: advertisement.serialNumber))
    case .didConnect(let serial, let info):
      runLink(link.linkUp(serialNumber: serial, info: info))
    case .didFailToConnect(let serial, let error):
      runLink(link.linkFailed(serialNumber: serial, error: error))
    case .didDisconnect(let serial, let reason):
      let interrupted = updateLinkLost(serialNumber: serial)
      runLink(link.linkDown(serialNumber: serial, reason: reason, isRadioOn: radioOn, preparationError: interrupted))
    }
  }

  private mutating func readerLink(_ event: ReaderLinkEvent) {
    switch event {
    case .batteryDidChange(let serial, let level, let charging):
      runLink(link.battery(serialNumber: serial, level: level, isCharging: charging))
    case .rebootResponse(let serial, let error):
      runLink(link.rebootResponse(serialNumber: serial, error: error))
    case .updateProgress(let serial, let progress):
      guard update?.reader.serialNumber == serial else { return }
      let now = self.now
      installStep { $0.readerProgress(progress, now: now) }
    case .updateFinished(let serial, let error):
      guard update?.reader.serialNumber == serial, update?.install != nil else {
        return lateInstallFinished(serialNumber: serial, error: error)
      }
      installStep { $0.readerFinished(error) }
    }
  }

  private mutating func runLink(_ steps: [ConnectionStateMachine.Action]) {
    for step in steps {
      switch step {
      case .listen, .stopListening: updateScan()
      case .openLink(let serial): emit(.openLink(serialNumber: serial))
      case .abandonLink(let serial): emit(.abandonLink(serialNumber: serial))
      case .closeLink(let serial): emit(.closeLink(serialNumber: serial))
      case .sendReboot(let serial): emit(.reboot(serialNumber: serial))
      case .arm(let timer, let delay): emit(.arm(.link(timer), after: delay))
      case .disarm(let timer): emit(.disarm(.link(timer)))
      case .linkReady(let reader):
        prepare(reader)
      case .connected(let reader):
        syncStatus()
        report(.didConnect(reader))
        armUpdateCheck()
        if let owner = linkOwner {
          // The connect completes once the store has answered, so a successful connect is on disk.
          saving = (owner, reader)
          linkOwner = nil
        }
        emit(
          .saveReader(
            SavedReader(
              serialNumber: reader.serialNumber, locationId: reader.locationId ?? "", deviceType: reader.deviceType,
              simulated: reader.simulated)))
      case .connectFailed(let error):
        let owner = linkOwner
        let serial = linkReader?.serialNumber ?? ""
        linkOwner = nil
        linkReader = nil
        syncStatus()
        report(.didFailToConnect(serialNumber: serial, error: error))
        if let owner { connectOwnerFinished(owner, .failure(error)) }
      case .disconnectCompleted(let reader):
        completeSavingConnect()
        emit(.disarm(.updateCheck))
        linkReader = nil
        syncStatus()
        report(.didDisconnect(reader, reason: .disconnectRequested))
        finishRunning(.disconnect, error: nil)
      case .rebootAnswered(let error):
        report(.didRespondToReboot(serialNumber: linkReader?.serialNumber ?? "", error: error))
        if error == nil, let id = queue.running, jobs[id] == .reboot {
          complete(id, .success(nil))
          acceptedReboot = id
        } else {
          finishRunning(.reboot, error: error)
        }
      case .rebootNotCarriedOut:
        releaseAcceptedReboot()
      case .reconnectStarted(let reader, let reason):
        completeSavingConnect()
        emit(.disarm(.updateCheck))
        releaseHeld = false
        queue.hold()
        reconnectHandles += 1
        reconnection = (reconnectHandles, false)
        emit(.openReconnectHandle(reconnectHandles))
        syncStatus()
        report(.didStartReconnect(reader, reason: reason), to: .readerDelegate)
        releaseAcceptedReboot()
      case .reconnectSucceeded(let reader):
        syncStatus()
        report(.readerDidSucceedReconnect(reader), to: .readerDelegate)
        armUpdateCheck()
        if let ended = reconnection { emit(.closeReconnectHandle(ended.handle, canceled: false)) }
        reconnection = nil
        releaseHeld = true
      case .reconnectFailed(let reader, let error):
        report(.readerDidFailReconnect(reader, error: error), to: .readerDelegate)
      case .disconnected(let reader, let reason):
        completeSavingConnect()
        emit(.disarm(.updateCheck))
        linkReader = nil
        syncStatus()
        report(.didDisconnect(reader, reason: reason), to: .readerDelegate)
        if let ended = reconnection {
          emit(.closeReconnectHandle(ended.handle, canceled: ended.canceled))
          reconnection = nil
          releaseHeld = true
        }
        // A reboot that never got its answer must still complete.
        finishRunning(.reboot, error: notConnected())
        releaseAcceptedReboot()
      case .lowBatteryWarning(let reader):
        report(.readerDidReportLowBatteryWarning(reader), to: .readerDelegate)
      case .readerUpdated(let reader):
        syncStatus()
        report(.didReportBatteryLevel(reader), to: .readerDelegate)
      }
    }
    syncStatus()
  }

  private mutating func readerSaved(_ serial: String, _ error: ReaderError?) {
    // The connection stands either way; only reconnect at launch is affected. Say so on the stream.
    report(.didSaveReader(serialNumber: serial, error: error))
    if saving?.reader.serialNumber == serial { completeSavingConnect() }
  }

  /// Completes the connect that waits for its reader to be saved; it did connect, whatever happens
  /// to the link since.
  private mutating func completeSavingConnect() {
    guard let (owner, reader) = saving else { return }
    saving = nil
    connectOwnerFinished(owner, .success(reader))
  }

  private mutating func connectOwnerFinished(_ owner: JobID, _ result: Result<Reader, ReaderError>) {
    switch jobs[owner] {
    case .connect:
      complete(owner, result.map { $0 })
      finishCommand(owner)
    case .launch:
      launchStep { $0.connectFinished(result) }
    case nil:
      break
    default:
      preconditionFailure("a connection belongs to a connect or launch command")
    }
  }

  /// Completes the running command if it is `command` (a disconnect or a reboot).
  private mutating func finishRunning(_ command: Command, error: ReaderError?) {
    guard let id = queue.running, jobs[id] == command else { return }
    complete(id, error.map { .failure($0) } ?? .success(nil))
    finishCommand(id)
  }

  private mutating func releaseAcceptedReboot() {
    guard let id = acceptedReboot else { return }
    acceptedReboot = nil
    finishCommand(id)
  }

  // MARK: Timers

  private mutating func timerFired(_ timer: Timer) {
    switch timer {
    case .discovery(let timer):
      runDiscovery(discovery.timerFired(timer, now: now))
    case .link(let timer):
      runLink(link.timerFired(timer))
    case .launchTimeout:
      launchStep { $0.timedOut() }
    case .install(let timer):
      let now = self.now
      installStep { $0.timerFired(timer, now: now) }
    case .updateCheck:
      idleUpdateCheck()
    }
  }

  // MARK: Software updates

  private var date: Date { updates.epoch.addingTimeInterval(now.inSeconds) }

  /// The link came up: check the reader's software before it counts as connected (or reconnected).
  private mutating func prepare(_ reader: Reader) {
    update = UpdateWork(purpose: .preparing, reader: reader)
    if let test = linkSettings?.testUpdate {
      // A test update is drawn once per connection; a reconnection sees what is still pending of it.
      if let first = testAvailability {
        return checked(
          UpdateAvailability(
            update: reader.availableUpdate, installedVersionSupersededAt: first.installedVersionSupersededAt))
      }
      let resolved = test.resolve(installedVersion: reader.deviceSoftwareVersion ?? "", at: date, random: &random)
      testFault = resolved.fault
      testAvailability = resolved.availability
      return checked(resolved.availability)
    }
    askCatalog(about: reader)
  }

  private mutating func askCatalog(about reader: Reader) {
    do {
      let version = try SoftwareVersion(reader.deviceSoftwareVersion ?? "")
      updateRequests += 1
      update?.request = updateRequests
      emit(
        .checkForUpdate(
          request: updateRequests,
          InstalledSoftware(
            deviceType: reader.deviceType, serialNumber: reader.serialNumber, locationId: reader.locationId ?? "",
            version: version), at: date))
    } catch {
      updateChecked(.failure(error))
    }
  }

  private mutating func updateChecked(_ result: Result<UpdateAvailability, ReaderError>) {
    guard let work = update, work.install == nil, !work.abandoned else { return }
    switch result {
    case .success(let availability):
      checked(availability)
    case .failure(let cause):
      update = nil
      // A catalog that cannot answer is never read as "no update": a reader being prepared cannot be
      // vouched for, so its connection fails; an idle check is simply tried again later.
      if work.purpose == .preparing {
        var context = cause.context
        context["cause"] = "\(cause.code)"
        runLink(
          link.preparationFailed(
            ReaderError(
              .readerSoftwareUpdateFailedServerError,
              "the reader's software could not be checked: \(cause.message)", context: context)))
      }
    }
  }

  /// The catalog (or the test update) said what applies to the reader of `update`.
  private mutating func checked(_ availability: UpdateAvailability) {
    guard var work = update else { return }
    work.availability = availability
    update = work
    switch (updates.policy.decide(availability, at: date), work.purpose) {
    case (.required(let required), .preparing):
      startInstall(required)
    case (.upToDate, .preparing):
      update = nil
      var reader = work.reader
      reader.availableUpdate = nil
      runLink(link.prepared(reader))
    case (.optional(let optional), .preparing):
      update = nil
      var reader = work.reader
      // An update already reported (before a reconnection) is kept as it was, and not reported again.
      let known = reader.availableUpdate?.deviceSoftwareVersion == optional.deviceSoftwareVersion
      reader.availableUpdate = known ? reader.availableUpdate : optional
      runLink(link.prepared(reader))
      if !known, link.connectedReader?.serialNumber == reader.serialNumber {
        report(.didReportAvailableUpdate(reader, update: optional), to: .readerDelegate)
      }
    case (let decision, .idleCheck):
      update = nil
      // While connected an update is only offered: a required one installs at the next connection.
      let offered: ReaderSoftwareUpdate? =
        switch decision {
        case .upToDate: nil
        case .optional(let update), .required(let update): update
        }
      guard let reader = link.connectedReader, reader.serialNumber == work.reader.serialNumber,
        reader.availableUpdate != offered
      else { return }
      link.updateReader { $0.availableUpdate = offered }
      syncStatus()
      if let offered, let updated = link.connectedReader {
        report(.didReportAvailableUpdate(updated, update: offered), to: .readerDelegate)
      }
    case (_, .app):
      preconditionFailure("an app install does not ask the catalog")
    }
  }

  /// `installAvailableUpdate()`: installs the connected reader's available update, or reports at once
  /// that there is none (`didFinishInstallingUpdate(nil, nil)`).
  private mutating func installAvailableUpdate(_ id: JobID) {
    if update?.purpose == .idleCheck { update = nil }  // The app's install goes first; its answer is dropped.
    guard let reader = link.connectedReader, link.status == .connected, update == nil else {
      return fail(id, notConnected())
    }
    guard let available = reader.availableUpdate else {
      report(.didFinishInstallingUpdate(reader, update: nil, error: nil), to: .readerDelegate)
      complete(id, .success(reader))
      return finishCommand(id)
    }
    update = UpdateWork(purpose: .app(id), reader: reader)
    startInstall(available)
  }

  private mutating func startInstall(_ pending: ReaderSoftwareUpdate) {
    update?.install = UpdateInstallStateMachine(update: pending, fault: testFault)
    let (now, date) = (self.now, self.date)
    installStep { $0.start(at: now, date: date) }
  }

  private mutating func installStep(
    _ input: (inout UpdateInstallStateMachine) -> [UpdateInstallStateMachine.Action]
  ) {
    guard var work = update, var install = work.install else { return }
    let steps = input(&install)
    work.install = install
    update = work
    let serial = work.reader.serialNumber
    for step in steps {
      switch step {
      case .started(let started, let cancelable):
        if cancelable {
          installHandles += 1
          update?.handle = installHandles
          emit(.openInstallHandle(installHandles))
        }
        report(.didStartInstallingUpdate(work.reader, update: started, cancelable: cancelable), to: .readerDelegate)
      case .progress(let progress):
        report(.didReportReaderSoftwareUpdateProgress(work.reader, progress: progress), to: .readerDelegate)
      case .fetchImage(let image):
        updateRequests += 1
        update?.request = updateRequests
        emit(.fetchImage(request: updateRequests, image))
      case .install(let pending, let image, let fault):
        emit(.installUpdate(serialNumber: serial, update: pending, image: image, fault: fault))
      case .cancelInstall: emit(.cancelUpdate(serialNumber: serial))
      case .arm(let timer, let delay): emit(.arm(.install(timer), after: delay))
      case .disarm(let timer): emit(.disarm(.install(timer)))
      case .finished(let finished, let error): installFinished(finished, error)
      }
    }
  }

  private mutating func installFinished(_ installed: ReaderSoftwareUpdate, _ error: ReaderError?) {
    guard let work = update else { return }
    update = nil
    var reader = work.reader
    if error == nil {
      reader.deviceSoftwareVersion = installed.deviceSoftwareVersion
      reader.availableUpdate = nil
    }
    if case .app = work.purpose, error == nil {
      // What the callback reads (`connectedReader`) already runs the new version.
      link.updateReader {
        $0.deviceSoftwareVersion = installed.deviceSoftwareVersion
        $0.availableUpdate = nil
      }
      syncStatus()
      reader = link.connectedReader ?? reader
    }
    if error?.code == .canceled, error?.context["confirmed"] == "false" {
      unconfirmedInstall = (reader.serialNumber, installed)
    }
    report(.didFinishInstallingUpdate(reader, update: installed, error: error), to: .readerDelegate)
    if let handle = work.handle { emit(.closeInstallHandle(handle, canceled: error?.code == .canceled)) }
    switch work.purpose {
    case .preparing:
      guard !work.abandoned else { return }  // The link is being let go of.
      guard let error else { return runLink(link.prepared(reader)) }
      if error.code == .readerSoftwareUpdateFailedInterrupted {
        // Lost with the link: the link machine ends the connection with this error. Reported by a
        // reader whose link is still up (or that went silent): the connection ends here.
        if !work.linkGone { runLink(link.preparationFailed(error)) }
        return
      }
      if error.code == .canceled {
        return runLink(
          link.preparationFailed(
            ReaderError(
              .unsupportedReaderVersion,
              "the required update was cancelled; the reader cannot be used until it is installed",
              context: ["version": reader.deviceSoftwareVersion ?? "", "update": installed.deviceSoftwareVersion])))
      }
      guard updates.policy.connectsDespiteFailure(work.availability, error: error, at: date) else {
        return runLink(link.preparationFailed(error))
      }
      // The grace rule: it connects with the update pending, tried again at the next connection.
      reader.availableUpdate = installed
      runLink(link.prepared(reader))
      if link.connectedReader?.serialNumber == reader.serialNumber {
        report(.didReportAvailableUpdate(reader, update: installed), to: .readerDelegate)
      }
    case .app(let id):
      complete(id, error.map { .failure($0) } ?? .success(reader))
      finishCommand(id)
    case .idleCheck:
      preconditionFailure("an idle check installs nothing")
    }
  }

  /// A reader finished an install the terminal had given up on (its cancel was never confirmed):
  /// the reader runs the new version, so the terminal says so.
  private mutating func lateInstallFinished(serialNumber: String, error: ReaderError?) {
    guard let unconfirmed = unconfirmedInstall, unconfirmed.serialNumber == serialNumber else { return }
    unconfirmedInstall = nil
    guard error == nil, link.connectedReader?.serialNumber == serialNumber else { return }
    link.updateReader {
      $0.deviceSoftwareVersion = unconfirmed.update.deviceSoftwareVersion
      $0.availableUpdate = nil
    }
    syncStatus()
  }

  /// The link to `serialNumber` went down: update work for it ends (an install is interrupted).
  /// Returns the interruption, for a connect whose reader was being prepared.
  private mutating func updateLinkLost(serialNumber: String) -> ReaderError? {
    guard let work = update, work.reader.serialNumber == serialNumber else { return nil }
    guard work.install != nil else {
      update = nil  // A check whose answer no longer matters.
      return nil
    }
    var interruption: ReaderError?
    update?.linkGone = true
    installStep { install in
      let steps = install.linkLost()
      for case .finished(_, let error) in steps { interruption = error }
      return steps
    }
    return interruption
  }

  /// The connection being prepared was cancelled: stop its update work at once.
  private mutating func abandonUpdate() {
    guard update?.purpose == .preparing else { return }
    update?.abandoned = true
    if update?.install != nil {
      installStep { $0.abandon() }
    }
    update = nil
  }

  private mutating func armUpdateCheck() {
    // A connection with a test update sees that update, not the catalog's.
    guard updates.hasCatalog, linkSettings?.testUpdate == nil else { return }
    emit(.arm(.updateCheck, after: updates.checkInterval))
  }

  /// Asks the catalog again while a reader is connected and nothing else runs.
  private mutating func idleUpdateCheck() {
    guard let reader = link.connectedReader, link.status == .connected else { return }
    armUpdateCheck()
    guard queue.running == nil, update == nil else { return }
    update = UpdateWork(purpose: .idleCheck, reader: reader)
    askCatalog(about: reader)
  }

  // MARK: Reporting

  private mutating func emit(_ action: Action) {
    actions.append(action)
  }

  private mutating func report(_ kind: TerminalEvent.Kind, to recipient: Recipient = .stream) {
    emit(.report(kind, to: recipient))
  }

  /// Publishes the status (and connected reader) if it changed.
  private mutating func syncStatus() {
    let linkStatus = link.status == .notConnected && connectPending ? .connecting : link.status
    let status: ConnectionStatus = linkStatus == .notConnected && discoveryOwner != nil ? .discovering : linkStatus
    let reader = link.connectedReader
    guard status != published.status || reader != published.reader else { return }
    let changed = status != published.status
    published = (status, reader)
    emit(.status(status, connectedReader: reader))
    if changed { report(.didChangeConnectionStatus(status), to: .terminalDelegate) }
  }

  private func notConnected() -> ReaderError {
    ReaderError(.notConnected, "no reader is connected", context: ["status": published.status.rawValue])
  }

  private static func unsupported(serialNumber: String?) -> ReaderError {
    ReaderError(
      .bluetoothUnsupported,
      "this terminal has no Bluetooth backend for real readers; discover simulated readers (simulated: true)",
      context: serialNumber.map { ["serialNumber": $0] } ?? [:])
  }
}
