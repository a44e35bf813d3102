#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The whole terminal as one pure machine: the composer of the lifecycle machines — the command
/// line-up (`CommandQueue`), discovery (`DiscoveryStateMachine`), the reader link
/// (`ConnectionStateMachine`), reconnect at launch (`LaunchReconnectStateMachine`) and software
/// updates (`SoftwareUpdateStateMachine`) — which alone decides the order of everything.
///
/// How it composes: the driver (`TerminalEngine`) feeds every input — a command, a cancel, a
/// Bluetooth or reader-link event, a timer, the result of a store read or write — into
/// `handle(_:now:)` and performs the actions that come back, in order; it decides nothing. The input
/// goes to the child it concerns; each child answers with typed outputs, which are routed in order
/// (`TerminalStateMachine+Routing.swift`, one switch per child): an effect becomes an action, and an
/// output that concerns another child becomes a follow-up input, queued (FIFO) behind the batch being
/// routed. No child is ever fed while another's batch is half routed, so no child calls another, and
/// a batch can never outlive the lifecycle it belongs to. When the follow-ups are done, the next
/// command starts (its own follow-ups run the same way).
///
/// The rules that span lifecycles live in the routing, and nowhere else:
/// - Commands run one at a time in FIFO order; the next one starts only once the input being handled
///   and its follow-ups are done, so it sees the state they leave (a reconnection that holds the
///   line), never a state half-way through.
/// - A connect ends a running discovery (success) and, with no reader connected, goes before the
///   commands queued behind that discovery; a discovery that starts with a connect waiting behind it
///   ends at once. While it moves from one to the other the status reads `connecting`, never
///   `notConnected` in between.
/// - Automatic reconnection holds the line: queued commands wait until it succeeds or fails.
/// - An accepted reboot keeps the line until the reader drops the link (or keeps it past the reply
///   timeout), so a command queued behind it sees the reconnection or the disconnect.
/// - Save before completing: a successful first connection is saved for reconnect at launch, and the
///   connect (or launch) completes once the store has answered (`didSaveReader` first), or once the
///   link ends, before that is reported.
/// - A link that comes up is prepared by the update lifecycle before the reader counts as connected,
///   so a connect with a required update completes after `didFinishInstallingUpdate`, and a reader
///   lost during an install is never reported connected; an optional update is reported after
///   `didConnect`.
/// - The status is derived in one place (`publishStatus()`) from the link, a pending connect and the
///   discovery, and published after each batch of a child's outputs, and before each report or
///   completion that may read it.
package struct TerminalStateMachine {
  package typealias JobID = UInt64

  /// An input for a child, queued behind the batch of outputs that asked for it.
  enum FollowUp {
    /// Start a discovery for command `owner` (a launch's search).
    case startDiscovery(owner: JobID, DiscoveryMethod, simulated: Bool)
    /// End the running discovery (`nil`: success).
    case finishDiscovery(ReaderError?)
    /// Connect `Reader` for command `owner` (a launch that found its reader).
    case connect(owner: JobID, Reader, ConnectionSettings)
    /// Prepare the reader whose link came up (its software).
    case prepare(Reader)
    /// The reader being prepared may count as connected.
    case prepared(Reader)
    /// Tell the reader's delegate of an update newly offered to `Reader`, if the link connected it.
    case announce(Reader, ReaderSoftwareUpdate)
    /// The reader being prepared cannot be used.
    case preparationFailed(ReaderError)
    /// The link to a reader being prepared went (let go of for a test update), with this error.
    case linkDown(serialNumber: String, ReaderError)
    /// The launch's search reported readers.
    case readersReported([Reader])
    /// The launch's search ended.
    case searchEnded(ReaderError?)
  }

  /// The command whose connect the link serves.
  enum ConnectOwner {
    /// None (a reconnection, or nothing).
    case none
    /// `JobID` waits for the link's first connection.
    case linking(JobID)
    /// `JobID` connected `Reader`, and waits for the store to save it.
    case saving(JobID, Reader)
  }

  /// What the input being handled has produced so far.
  struct Work {
    var actions: [Action] = []
    var followUps: [FollowUp] = []
    /// Commands done; the line moves once the follow-ups are.
    var finished: [JobID] = []
    /// A reconnection ended: the held line starts again.
    var releaseHeld = false
    /// A connect is about to start: the status goes straight to `connecting`.
    var connectPending = false
  }

  // The children.
  var queue = CommandQueue<JobID>()
  var discovery: DiscoveryStateMachine
  var link: ConnectionStateMachine
  var launch: (owner: JobID, machine: LaunchReconnectStateMachine)?
  var updates: SoftwareUpdateStateMachine

  /// The commands not completed yet, waiting or running.
  var jobs: [JobID: Command] = [:]
  /// The command the running discovery belongs to (a discovery or a launch).
  var discoveryOwner: JobID?
  var connectOwner = ConnectOwner.none
  /// The reader the link is for, from the connect until the link is given up.
  var linkReader: Reader?
  /// The reconnection in progress, its handle, and whether the app cancelled it.
  var reconnection: (handle: UInt64, canceled: Bool)?
  var reconnectHandles: UInt64 = 0
  /// A reboot accepted by the reader, which keeps the line until the reader drops the link.
  var acceptedReboot: JobID?
  /// Whether the radio is scanning on the terminal's behalf (a discovery, or a connect listening).
  var scanning = false
  /// Whether the host's radio is on, as it last said.
  var radioOn: Bool
  var published = (status: ConnectionStatus.notConnected, reader: Reader?.none)
  /// The seed source of each connection's reconnection jitter (and of a random test update).
  var random: SeededRandom
  let tuning: DiscoveryTuning
  let realReadersSupported: Bool
  /// The update connections to simulated readers see when their configuration names none.
  var simulatedReaderUpdate: TestReaderUpdate?

  var now = Duration.zero
  var work = Work()

  /// A terminal machine. `realReadersSupported` says whether the host has a Bluetooth backend for
  /// real (non-simulated) readers; without one, discovering or connecting them fails with
  /// `bluetoothUnsupported`. `radioOn` is the host radio's state when the terminal starts; the radio
  /// reports every change after it (`radioStateChanged`).
  package init(
    tuning: DiscoveryTuning = DiscoveryTuning(), seed: UInt64, realReadersSupported: Bool = true,
    updates: UpdateSettings = UpdateSettings(), radioOn: Bool = true
  ) {
    self.tuning = tuning
    self.updates = SoftwareUpdateStateMachine(settings: updates)
    self.discovery = DiscoveryStateMachine(tuning: tuning)
    self.link = ConnectionStateMachine(autoReconnect: true, policy: .default, random: SeededRandom(seed: seed))
    self.random = SeededRandom(seed: seed)
    self.realReadersSupported = realReadersSupported
    self.radioOn = radioOn
  }

  /// The status as last published.
  package var status: ConnectionStatus { published.status }

  /// Whether the readers a scan looks for now are simulated: the running discovery's, else those of the
  /// reader a connect listens for (for a central that routes simulated and real readers apart).
  package var scanningForSimulatedReaders: Bool {
    discovery.isRunning ? discovery.simulated : (linkReader?.simulated ?? false)
  }

  /// Whether a command that ended with `result` was cancelled (its `Cancelable` says so).
  package static func wasCanceled(_ result: Result<Reader?, ReaderError>) -> Bool {
    result.failure?.code == .canceled
  }

  // MARK: Inputs

  /// Handles one input at `now`.
  package mutating func handle(_ input: Input, now: Duration) -> [Action] {
    if case .bluetooth(.advertisement(let advertisement)) = input {
      return self.advertisement(advertisement, now: now)
    }
    return process(input, now: now)
  }

  /// An advertisement, the input that comes thousands of times a second: one update of the sightings
  /// table and nothing else, unless a connect listens for this reader.
  package mutating func advertisement(_ advertisement: Advertisement, now: Duration) -> [Action] {
    discovery.advertisement(advertisement, now: now)
    // `isListening` reads the link's state in place; `listeningFor` copies the reader it holds.
    guard link.isListening else { return [] }
    return listenedAdvertisement(advertisement, now: now)
  }

  /// An advertisement heard while a connect listens: the whole path, if it is the reader listened for. Apart
  /// from `advertisement(_:now:)`, which it would otherwise cost a copy of the advertisement on every call.
  @inline(never)
  private mutating func listenedAdvertisement(_ advertisement: Advertisement, now: Duration) -> [Action] {
    guard link.listeningFor == advertisement.serialNumber else { return [] }
    return process(.bluetooth(.advertisement(advertisement)), now: now)
  }

  mutating func process(_ input: Input, now: Duration) -> [Action] {
    self.now = now
    step(input)
    while true {
      while !work.followUps.isEmpty { step(work.followUps.removeFirst()) }
      guard let next = nextCommand() else { break }
      begin(next)
    }
    work.connectPending = false
    publishStatus()
    defer { work = Work() }
    return work.actions
  }

  mutating func step(_ input: Input) {
    switch input {
    case .submit(let id, let command): submit(id, command)
    case .cancel(let id): cancel(id)
    case .cancelReconnect(let handle): cancelReconnect(handle)
    case .bluetooth(let event): bluetooth(event)
    case .readerLink(let event): readerLink(event)
    case .timerFired(let timer): timerFired(timer)
    case .savedReaderLoaded(let result):
      let refusal = link.connectRefusal
      feedLaunch { $0.savedReaderLoaded(result, connectRefusal: refusal) }
    case .readerSaved(let serial, let error):
      // The connection stands either way; only reconnect at launch is affected. Say so on the stream.
      report(.didSaveReader(serialNumber: serial, error: error))
      if case .saving(_, let reader) = connectOwner, reader.serialNumber == serial { completeSavedConnect() }
    case .updateChecked(let request, let result):
      route(updates.catalogAnswered(request: request, result, now: now, connectedReader: link.connectedReader))
    case .imageFetched(let request, let result):
      route(updates.imageFetched(request: request, result, now: now))
    case .cancelInstall(let handle):
      route(updates.cancelInstall(handle: handle, now: now))
    case .simulatedReaderUpdate(let update):
      simulatedReaderUpdate = update
    }
  }

  mutating func step(_ followUp: FollowUp) {
    switch followUp {
    case .startDiscovery(let owner, let method, let simulated):
      startDiscovery(owner: owner, method: method, simulated: simulated)
    case .finishDiscovery(let error):
      finishDiscovery(error)
    case .connect(let owner, let reader, let settings):
      startConnect(owner: owner, reader: reader, settings: settings)
    case .prepare(let reader):
      route(updates.prepare(reader, now: now, random: &random))
    case .prepared(let reader):
      route(link.prepared(reader))
    case .announce(let reader, let update):
      guard link.connectedReader?.serialNumber == reader.serialNumber else { return }
      report(.didReportAvailableUpdate(reader, update: update), to: .readerDelegate)
    case .preparationFailed(let error):
      route(link.preparationFailed(error))
    case .linkDown(let serial, let error):
      route(link.linkDown(serialNumber: serial, reason: .unknown, isRadioOn: radioOn, preparationError: error))
    case .readersReported(let readers):
      feedLaunch { $0.readersReported(readers) }
    case .searchEnded(let error):
      feedLaunch { $0.discoveryEnded(error) }
    }
  }

  mutating func bluetooth(_ event: BluetoothEvent) {
    switch event {
    case .radioStateChanged(let on):
      radioOn = on
      if !on { finishDiscovery(ReaderError(.bluetoothDisabled, "Bluetooth was turned off during discovery")) }
      route(link.radio(isPoweredOn: on))
    case .advertisement(let advertisement):
      route(link.heard(serialNumber: advertisement.serialNumber))
    case .didConnect(let serial, let info):
      route(link.linkUp(serialNumber: serial, info: info))
    case .didFailToConnect(let serial, let error):
      route(link.linkFailed(serialNumber: serial, error: error))
    case .didDisconnect(let serial, let reason):
      // The update lifecycle says what the loss made of an install; the link machine ends the
      // connection with it.
      let lost = updates.linkLost(serialNumber: serial, now: now)
      var interrupted: ReaderError?
      for case .interrupted(let error) in lost { interrupted = error }
      route(lost)
      route(link.linkDown(serialNumber: serial, reason: reason, isRadioOn: radioOn, preparationError: interrupted))
    }
  }

  mutating func readerLink(_ event: ReaderLinkEvent) {
    switch event {
    case .batteryDidChange(let serial, let level, let charging):
      route(link.battery(serialNumber: serial, level: level, isCharging: charging))
    case .rebootResponse(let serial, let error):
      route(link.rebootResponse(serialNumber: serial, error: error))
    case .updateProgress(let serial, let progress):
      route(updates.readerProgress(serialNumber: serial, progress, now: now))
    case .updateFinished(let serial, let error):
      route(updates.readerFinished(serialNumber: serial, error, now: now, connectedReader: link.connectedReader))
    }
  }

  mutating func timerFired(_ timer: Timer) {
    switch timer {
    case .discovery(let timer):
      route(discovery.timerFired(timer, now: now), owner: discoveryOwner)
    case .link(let timer):
      route(link.timerFired(timer))
    case .launchTimeout:
      // The search decides on every reader heard up to now: those recorded since the last tick are
      // reported first, as the scan's own timeout does.
      guard launch?.machine.isSearching == true else { return }
      route(discovery.reportNow(now: now), owner: discoveryOwner)
      let heard = discovery.discoveredReaders
      feedLaunch { $0.timedOut(heard: heard) }
    case .install(let timer):
      route(updates.timerFired(timer, now: now))
    case .updateCheck:
      let connected = link.status == .connected ? link.connectedReader : nil
      route(updates.checkTimerFired(connectedReader: connected, lineIsIdle: queue.running == nil, now: now))
    }
  }

  // MARK: Commands

  mutating func submit(_ id: JobID, _ command: Command) {
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

  mutating func cancel(_ id: JobID) {
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
        if case .linking(id) = connectOwner {
          route(updates.abandon(now: now))
          if let steps = link.cancelConnect(command.name) { route(steps) }
        } else if launch?.owner == id {
          feedLaunch { $0.cancel() }
        }
      case .disconnect, .reboot, .installUpdate:
        break  // Already sent to the reader: they run to the end (cancel an install with its own handle).
      }
    case .unknown:
      break
    }
  }

  mutating func cancelReconnect(_ handle: UInt64) {
    guard reconnection?.handle == handle, link.isReconnecting else { return }
    route(updates.abandon(now: now))
    guard let steps = link.cancelReconnect() else { return }
    reconnection?.canceled = true
    route(steps)
  }

  mutating func begin(_ id: JobID) {
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
      feedLaunch { $0.start() }
    case .installUpdate:
      let connected = link.status == .connected ? link.connectedReader : nil
      route(updates.installAvailable(id, on: connected, notConnected: notConnected(), now: now))
    }
    publishStatus()
  }

  /// Runs a short command (disconnect, reboot) on the link; the link only changes when it accepts.
  mutating func sendToLink(
    _ id: JobID, _ command: (inout ConnectionStateMachine) -> Result<[ConnectionStateMachine.Action], ReaderError>
  ) {
    switch command(&link) {
    case .success(let steps): route(steps)
    case .failure(let error): fail(id, error)
    }
  }

  mutating func startDiscovery(owner: JobID, method: DiscoveryMethod, simulated: Bool) {
    discoveryOwner = owner
    guard simulated || realReadersSupported else {
      return route([.finish(Self.unsupported(serialNumber: nil))], owner: owner)
    }
    route(discovery.start(method, simulated: simulated, radioOn: radioOn, now: now), owner: owner)
  }

  mutating func finishDiscovery(_ error: ReaderError?) {
    guard let owner = discoveryOwner else { return }
    route(discovery.finish(error), owner: owner)
  }

  /// Ends the running discovery because a connect to `reader` was issued. When that connect is about
  /// to start (no reader connected, and `reader` was heard) the status goes from discovering straight
  /// to connecting, and the discovery's completion already reads `connecting`.
  mutating func endDiscoveryForConnect(to reader: Reader) {
    work.connectPending = link.isIdle && discovery.freshness(of: reader.serialNumber, now: now) != .never
    finishDiscovery(nil)
  }

  mutating func startConnect(owner: JobID, reader: Reader, settings: ConnectionSettings) {
    work.connectPending = false
    guard reader.simulated || realReadersSupported else {
      return fail(owner, Self.unsupported(serialNumber: reader.serialNumber))
    }
    let heard = discovery.freshness(of: reader.serialNumber, now: now)
    var settings = settings
    // A simulated reader sees the simulator's update unless the connection picked a test update itself.
    if reader.simulated, settings.testUpdate == nil { settings.testUpdate = simulatedReaderUpdate }
    settings.preparesReader = updates.preparesReaders(testUpdate: settings.testUpdate)
    let attempt = link.connect(
      reader, settings: settings, heard: heard, radioOn: radioOn, listenFor: tuning.stalenessWindow,
      random: SeededRandom(seed: random.next()))
    switch attempt {
    case .success(let steps):
      connectOwner = .linking(owner)
      linkReader = reader
      updates.connectionStarted(testUpdate: settings.testUpdate)
      emit(.adoptReaderDelegate(owner))
      route(steps)
    case .failure(let error):
      fail(owner, error)
    }
  }

  mutating func feedLaunch(
    _ input: (inout LaunchReconnectStateMachine) -> [LaunchReconnectStateMachine.Action]
  ) {
    guard var current = launch else { return }
    let steps = input(&current.machine)
    launch = current
    route(steps, launchOwner: current.owner)
  }

  // MARK: The line

  /// Command `id` failed before it could run.
  mutating func fail(_ id: JobID, _ error: ReaderError) {
    guard jobs[id] != nil else { return }
    publishStatus()  // The completion reads the status the failure leaves, not a pending connect's.
    commandEnded(id, .failure(error))
  }

  /// A connect or a launch ended with `result`: it completes (a launch says so on the stream first).
  mutating func commandEnded(_ id: JobID, _ result: Result<Reader?, ReaderError>) {
    if case .launch = jobs[id], launch?.owner == id {
      launch = nil
      report(.didFinishLaunchReconnect(result.failure))
    }
    complete(id, result)
    finishCommand(id)
  }

  /// Completes the connect (or launch) that waits for its reader to be saved; it did connect,
  /// whatever happens to the link since.
  mutating func completeSavedConnect() {
    guard case .saving(let owner, let reader) = connectOwner else { return }
    connectOwner = .none
    guard jobs[owner] != nil else { return }
    commandEnded(owner, .success(reader))
  }

  /// Runs the completion of command `id` (it leaves `jobs`; the line moves separately).
  mutating func complete(_ id: JobID, _ result: Result<Reader?, ReaderError>) {
    jobs[id] = nil
    emit(.complete(id, result))
  }

  /// Marks `id` done; the next command starts once the current input and its follow-ups are done.
  mutating func finishCommand(_ id: JobID) {
    work.finished.append(id)
  }

  /// Completes the running command if it is `command` (a disconnect or a reboot).
  mutating func finishRunning(_ command: Command, error: ReaderError?) {
    guard let id = queue.running, jobs[id] == command else { return }
    complete(id, error.map { .failure($0) } ?? .success(nil))
    finishCommand(id)
  }

  mutating func releaseAcceptedReboot() {
    guard let id = acceptedReboot else { return }
    acceptedReboot = nil
    finishCommand(id)
  }

  /// The command to start now that the line moved, if any.
  mutating func nextCommand() -> JobID? {
    while true {
      let start: CommandQueue<JobID>.Start
      if work.releaseHeld {
        work.releaseHeld = false
        start = queue.release()
      } else if !work.finished.isEmpty {
        start = queue.finish(work.finished.removeFirst())
      } else {
        return nil
      }
      if case .start(let next) = start { return next }
    }
  }

  // MARK: Actions and status

  mutating func emit(_ action: Action) {
    work.actions.append(action)
  }

  mutating func report(_ kind: TerminalEvent.Kind, to recipient: Recipient = .stream) {
    emit(.report(kind, to: recipient))
  }

  mutating func followUp(_ followUp: FollowUp) {
    work.followUps.append(followUp)
  }

  /// Publishes the status (and connected reader) if it changed: derived from the link, a connect
  /// about to start, and the discovery.
  mutating func publishStatus() {
    let linkStatus = link.status == .notConnected && work.connectPending ? .connecting : link.status
    let status: ConnectionStatus = linkStatus == .notConnected && discoveryOwner != nil ? .discovering : linkStatus
    let reader = link.connectedReader
    guard status != published.status || reader != published.reader else { return }
    let changed = status != published.status
    published = (status, reader)
    emit(.status(status, connectedReader: reader))
    if changed { report(.didChangeConnectionStatus(status), to: .terminalDelegate) }
  }

  /// Keeps the radio scanning exactly while a discovery runs or a connect listens for its reader.
  mutating func updateScan() {
    let wanted = discovery.isRunning || link.isListening
    guard wanted != scanning else { return }
    scanning = wanted
    emit(wanted ? .startScan : .stopScan)
  }

  func notConnected() -> ReaderError {
    .notConnected(status: published.status)
  }

  static func unsupported(serialNumber: String?) -> ReaderError {
    ReaderError(
      .bluetoothUnsupported,
      "this terminal has no Bluetooth backend for real readers; discover simulated readers (simulated: true)",
      context: serialNumber.map { ["serialNumber": $0] } ?? [:])
  }
}
