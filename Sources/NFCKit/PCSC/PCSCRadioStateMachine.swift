package import PCSCKit

/// The PC/SC radio's rules: polling rounds over `SCardGetStatusChange`, tags as presentations, tag
/// commands as APDU procedures, all the radio contract promises (`NFCRadio`), decided here and nowhere
/// else.
///
/// Pure: inputs in (the reader system's commands, the PC/SC calls' results, timers), actions out; the
/// driver (`PCSCNFCRadio`) performs them. The rules:
/// - A round first takes its turn in the cross-process session line (`tryLock`, retried on a timer
///   while another process's session runs; refused at once under policy `.refuse`), then lists the
///   readers and waits for changes of theirs and of the plug-and-play pseudo reader, each wait bounded.
///   `pollingStarted` comes as the first listing is asked for.
/// - A card that appears (present, with a new event counter) is connected exclusively, then reported
///   as a new tag; one that disappears, or whose reader goes, fails the commands on it (`.tagLost`)
///   and is reported removed, in that order. A tag removed and presented again is a new tag.
/// - Commands run one at a time, first come first served, each as a `TagProcedure`; every APDU must be
///   answered within `commandTimeout`, or the tag counts as gone (and stays ignored until presented
///   again) and the card lane, which the unanswered call blocks, is abandoned.
/// - A card another program holds exclusively past `busyTimeout` ends the round with `.busy`; the
///   PC/SC service going away ends it with `.terminated` (`.unsupported` when it was never reached).
/// - `stopPolling` ends a round with no event: the wait is cancelled, cards are released, the line is
///   left. Results of calls made for an ended round are absorbed.
package struct PCSCRadioStateMachine {
  /// The radio's settings, from the system's configuration.
  package struct Settings: Sendable, Hashable {
    package var reader: String?
    package var commandTimeout: Duration
    package var busyTimeout: Duration
    package var refusesWhenBusy: Bool
    /// How long one status wait may block.
    package var waitTimeout = Duration.seconds(1)
    /// How often a round waiting for another process's session asks again.
    package var lockRetry = Duration.milliseconds(50)

    package init(reader: String?, commandTimeout: Duration, busyTimeout: Duration, refusesWhenBusy: Bool) {
      self.reader = reader
      self.commandTimeout = commandTimeout
      self.busyTimeout = busyTimeout
      self.refusesWhenBusy = refusesWhenBusy
    }
  }

  /// A timer the driver arms.
  package enum Timer: Sendable, Hashable {
    case lockRetry(NFCRadioRequestID)
    case busy(NFCRadioRequestID)
    case command(UInt64)
  }

  /// What the driver must do, in order.
  package enum Action: Sendable, Hashable {
    case emit(NFCRadioEvent)
    case tryLock(NFCRadioRequestID)
    case releaseLock
    case listReaders(UInt64)
    case waitForChange([PCSCReaderState], timeout: Duration, UInt64)
    case cancelWait
    case connect(String, UInt64)
    case transmit([UInt8], PCSCCard, UInt64)
    case disconnect(PCSCCard)
    case abandonCardLane
    case arm(Timer, after: Duration)
    case disarm(Timer)
  }

  /// A radio command, as the radio contract issues it.
  package enum Command: Sendable, Hashable {
    case connect
    case operation(TagOperation)
  }

  private struct Reader {
    var state: UInt32 = PCSCReaderState.unaware
    var tag: NFCRadioTagID?
    var attaching = false
    /// The card's counter when another program held it at our connect.
    var contended: UInt32?
    /// The counter of a card not to connect again (it stopped answering, or cannot be connected).
    var ignored: UInt32?
  }

  private struct Tag {
    var reader: String
    var counter: UInt32
    var card: PCSCCard
    var family: TagFamily
  }

  private enum Job {
    case attach(reader: String, counter: UInt32, atr: [UInt8])
    case command(NFCRadioRequestID, NFCRadioTagID, TagOperation)
  }

  private enum Running {
    case attach(token: UInt64, reader: String, counter: UInt32, atr: [UInt8])
    case command(token: UInt64, NFCRadioRequestID, NFCRadioTagID, TagProcedure)
  }

  private struct Polling {
    var round: NFCRadioRequestID
    var readers: [String: Reader] = [:]
    var plugAndPlay: UInt32 = PCSCReaderState.unaware
    /// The listing or wait in flight on the monitor lane.
    var monitor: UInt64?
    var tags: [NFCRadioTagID: Tag] = [:]
    var jobs: [Job] = []
    var nextJob = 0
    var running: Running?
    var busyArmed = false
    /// Whether the service answered in this round: losing it afterwards is its stopping.
    var reached = false
  }

  private enum State {
    case idle
    case locking(NFCRadioRequestID)
    case polling(Polling)
    /// Transient: the polling value is out being changed, so its collections are not copied.
    case updating
  }

  private let settings: Settings
  private var state = State.idle
  private var nextToken: UInt64 = 0
  private var nextTag: UInt64 = 0

  package init(settings: Settings) {
    self.settings = settings
  }

  // MARK: The reader system

  package mutating func startPolling(_ round: NFCRadioRequestID) -> [Action] {
    var actions = end(event: nil)
    state = .locking(round)
    actions.append(.tryLock(round))
    return actions
  }

  package mutating func stopPolling(_ round: NFCRadioRequestID) -> [Action] {
    guard currentRound == round else { return [] }
    return end(event: nil)
  }

  package mutating func command(_ command: Command, on tag: NFCRadioTagID, request: NFCRadioRequestID) -> [Action] {
    let lost = NFCRadioEvent.response(request, .failed(.tagLost))
    guard case .polling(var polling) = state, polling.round.session == request.session, polling.tags[tag] != nil
    else { return [.emit(lost)] }
    guard case .operation(let operation) = command else { return [.emit(.response(request, .connected))] }
    state = .updating
    polling.jobs.append(.command(request, tag, operation))
    let actions = pump(&polling)
    state = .polling(polling)
    return actions
  }

  // MARK: The session line

  package mutating func lockAttempted(_ round: NFCRadioRequestID, _ attempt: NFCSessionLockAttempt) -> [Action] {
    guard case .locking(let current) = state, current == round else {
      // A late answer for a round that ended: leave the line it may have joined, unless another round
      // of this radio holds or waits for the same turn.
      return currentRound == nil ? [.releaseLock] : []
    }
    switch attempt {
    case .acquired:
      var polling = Polling(round: round)
      nextToken += 1
      polling.monitor = nextToken
      state = .polling(polling)
      return [.emit(.pollingStarted(round)), .listReaders(nextToken)]
    case .heldElsewhere(let holder):
      guard !settings.refusesWhenBusy else {
        state = .idle
        return [.releaseLock, .emit(.pollingFailed(round, PCSCRadioFailure.sessionElsewhere(holder: holder)))]
      }
      return [.arm(.lockRetry(round), after: settings.lockRetry)]
    case .failed(let cause, let path):
      state = .idle
      return [.releaseLock, .emit(.pollingFailed(round, PCSCRadioFailure.lockFailed(cause, path: path)))]
    }
  }

  package mutating func timerFired(_ timer: Timer) -> [Action] {
    switch timer {
    case .lockRetry(let round):
      guard case .locking(let current) = state, current == round else { return [] }
      return [.tryLock(round)]
    case .busy(let round):
      guard case .polling(var polling) = state, polling.round == round else { return [] }
      polling.busyArmed = false
      guard let reader = polling.readers.first(where: { $0.value.contended != nil && $0.value.tag == nil })?.key else {
        state = .polling(polling)
        return []
      }
      state = .polling(polling)
      return end(event: .pollingFailed(round, PCSCRadioFailure.heldElsewhere(reader, after: settings.busyTimeout)))
    case .command(let token):
      guard case .polling(var polling) = state, case .command(token, let request, let tag, _) = polling.running else {
        return []
      }
      state = .updating
      polling.running = nil
      var actions: [Action] = [
        .emit(.response(request, .failed(PCSCRadioFailure.stalled(after: settings.commandTimeout)))),
        .abandonCardLane,
      ]
      if let stalled = polling.tags[tag] { polling.readers[stalled.reader]?.ignored = stalled.counter }
      // The abandoned lane's cards are unusable: every tag goes, and cards still present come back as
      // new tags through a new lane.
      for id in polling.tags.keys.sorted() { actions += removeTag(id, from: &polling, disconnect: false) }
      for name in polling.readers.keys.sorted() { actions += evaluate(name, in: &polling) }
      actions += pump(&polling)
      state = .polling(polling)
      return actions
    }
  }

  // MARK: PC/SC results

  package mutating func readersListed(_ token: UInt64, _ result: Result<[String], PCSCError>) -> [Action] {
    guard case .polling(var polling) = state, polling.monitor == token else { return [] }
    let names: [String]
    switch result {
    case .success(let listed): names = listed.filter { settings.reader.map($0.contains) ?? true }
    case .failure(let error): return end(event: failed(polling, error))
    }
    state = .updating
    polling.reached = true
    var actions: [Action] = []
    for gone in polling.readers.keys.sorted() where !names.contains(gone) {
      actions += removeReader(gone, from: &polling)
    }
    for name in names where polling.readers[name] == nil { polling.readers[name] = Reader() }
    actions += wait(&polling)
    state = .polling(polling)
    return actions
  }

  package mutating func statusChanged(_ token: UInt64, _ result: Result<[PCSCReaderState], PCSCError>) -> [Action] {
    guard case .polling(var polling) = state, polling.monitor == token else { return [] }
    let states: [PCSCReaderState]
    switch result {
    case .success(let changed):
      states = changed
    case .failure(let error) where error.code == .timeout || error.code == .cancelled:
      state = .updating
      let actions = wait(&polling)
      state = .polling(polling)
      return actions
    case .failure(let error) where error.code == .unknownReader || error.code == .readerUnavailable:
      return relist(polling)
    case .failure(let error):
      return end(event: failed(polling, error))
    }
    state = .updating
    var actions: [Action] = []
    var relisting = false
    for reader in states {
      if reader.name == PCSCReaderState.plugAndPlay {
        relisting = relisting || reader.eventState & PCSCReaderState.changed != 0
        polling.plugAndPlay = reader.eventState & ~PCSCReaderState.changed
        continue
      }
      guard polling.readers[reader.name] != nil else { continue }
      if reader.isGone {
        actions += removeReader(reader.name, from: &polling)
        relisting = true
        continue
      }
      polling.readers[reader.name]?.state = reader.eventState & ~PCSCReaderState.changed
      actions += evaluate(reader.name, in: &polling, atr: reader.atr)
    }
    actions += pump(&polling)
    if relisting {
      nextToken += 1
      polling.monitor = nextToken
      actions.append(.listReaders(nextToken))
    } else {
      actions += wait(&polling)
    }
    state = .polling(polling)
    return actions
  }

  package mutating func connected(_ token: UInt64, _ result: Result<PCSCCard, PCSCError>) -> [Action] {
    guard case .polling(var polling) = state, case .attach(token, let name, let counter, let atr) = polling.running
    else {
      // A card connected for a round that ended goes back at once.
      if case .success(let card) = result { return [.disconnect(card)] }
      return []
    }
    state = .updating
    polling.running = nil
    polling.readers[name]?.attaching = false
    var actions: [Action] = []
    switch result {
    case .success(let card):
      if let reader = polling.readers[name], reader.state >> 16 == counter, Self.hasCard(reader.state) {
        nextTag += 1
        let id = NFCRadioTagID(nextTag)
        polling.tags[id] = Tag(reader: name, counter: counter, card: card, family: TagFamily(atr: atr))
        polling.readers[name]?.tag = id
        polling.readers[name]?.contended = nil
        actions.append(.emit(.tagsDetected(polling.round, [id])))
        if polling.busyArmed, !polling.readers.values.contains(where: { $0.contended != nil }) {
          polling.busyArmed = false
          actions.append(.disarm(.busy(polling.round)))
        }
      } else {
        actions.append(.disconnect(card))  // The card left while it was being connected.
      }
    case .failure(let error) where error.code == .sharingViolation:
      polling.readers[name]?.contended = counter
      if !polling.busyArmed {
        polling.busyArmed = true
        actions.append(.arm(.busy(polling.round), after: settings.busyTimeout))
      }
    case .failure(let error) where error.code.meansServiceGone:
      state = .polling(polling)
      return end(event: failed(polling, error))
    case .failure(let error) where error.code.meansCardGone || error.code == .invalidHandle:
      break  // The card went; the next status change says so.
    case .failure:
      polling.readers[name]?.ignored = counter  // It cannot be used; not again until presented again.
    }
    actions += pump(&polling)
    state = .polling(polling)
    return actions
  }

  package mutating func transmitted(_ token: UInt64, _ result: Result<[UInt8], PCSCError>) -> [Action] {
    guard case .polling(var polling) = state,
      case .command(token, let request, let tag, var procedure) = polling.running
    else { return [] }
    state = .updating
    polling.running = nil
    var actions: [Action] = [.disarm(.command(token))]
    switch result {
    case .failure(let error):
      actions.append(.emit(.response(request, .failed(PCSCRadioFailure.call(error)))))
      if error.code.meansServiceGone {
        state = .polling(polling)
        return actions + end(event: failed(polling, error))
      }
      if error.code.meansCardGone { actions += removeTag(tag, from: &polling, disconnect: true) }
    case .success(let bytes):
      let step = procedure.receive(bytes)
      actions += proceed(step, request, tag, procedure, in: &polling)
    }
    actions += pump(&polling)
    state = .polling(polling)
    return actions
  }

  // MARK: Rules

  private var currentRound: NFCRadioRequestID? {
    switch state {
    case .locking(let round): round
    case .polling(let polling): polling.round
    case .idle, .updating: nil
    }
  }

  /// Ends the round in progress (if any), with `event` when the radio ends it on its own.
  private mutating func end(event: NFCRadioEvent?) -> [Action] {
    var actions: [Action] = []
    switch state {
    case .idle, .updating:
      return event.map { [.emit($0)] } ?? []
    case .locking(let round):
      actions = [.disarm(.lockRetry(round)), .releaseLock]
    case .polling(let polling):
      if polling.monitor != nil { actions.append(.cancelWait) }
      if polling.busyArmed { actions.append(.disarm(.busy(polling.round))) }
      if case .command(let token, _, _, _) = polling.running {
        // The lane is busy with a command that may never return: give it up, its cards with it.
        actions += [.disarm(.command(token)), .abandonCardLane]
      } else {
        actions += polling.tags.keys.sorted().compactMap { polling.tags[$0].map { .disconnect($0.card) } }
      }
      actions.append(.releaseLock)
    }
    state = .idle
    return actions + (event.map { [.emit($0)] } ?? [])
  }

  /// The round's end when the service failed: it stopped, or it was never there.
  private func failed(_ polling: Polling, _ error: PCSCError) -> NFCRadioEvent {
    .pollingFailed(polling.round, PCSCRadioFailure.service(error, afterAnswering: polling.reached))
  }

  private mutating func relist(_ polling: Polling) -> [Action] {
    var polling = polling
    nextToken += 1
    polling.monitor = nextToken
    state = .polling(polling)
    return [.listReaders(nextToken)]
  }

  private mutating func wait(_ polling: inout Polling) -> [Action] {
    nextToken += 1
    polling.monitor = nextToken
    let readers = polling.readers.keys.sorted().map {
      PCSCReaderState(name: $0, currentState: polling.readers[$0]!.state)
    }
    let all = readers + [PCSCReaderState(name: PCSCReaderState.plugAndPlay, currentState: polling.plugAndPlay)]
    return [.waitForChange(all, timeout: settings.waitTimeout, nextToken)]
  }

  private static func hasCard(_ state: UInt32) -> Bool {
    PCSCReaderState(name: "", eventState: state).hasCard
  }

  /// What a reader's state means for its tag: a card gone or replaced is removed, a new one attached.
  private mutating func evaluate(_ name: String, in polling: inout Polling, atr: [UInt8]? = nil) -> [Action] {
    guard let reader = polling.readers[name] else { return [] }
    let counter = reader.state >> 16
    var actions: [Action] = []
    if let id = reader.tag, let tag = polling.tags[id], !Self.hasCard(reader.state) || tag.counter != counter {
      actions += removeTag(id, from: &polling, disconnect: true)
    }
    guard Self.hasCard(reader.state) else {
      polling.readers[name]?.contended = nil
      polling.readers[name]?.ignored = nil
      return actions
    }
    guard polling.readers[name]?.tag == nil, !reader.attaching, reader.ignored != counter else { return actions }
    if let held = reader.contended, held == counter, atr == nil { return actions }
    polling.readers[name]?.attaching = true
    polling.jobs.append(.attach(reader: name, counter: counter, atr: atr ?? []))
    return actions
  }

  /// Fails the commands on a tag (running and waiting), then reports it removed.
  private mutating func removeTag(_ id: NFCRadioTagID, from polling: inout Polling, disconnect: Bool) -> [Action] {
    guard let tag = polling.tags.removeValue(forKey: id) else { return [] }
    if polling.readers[tag.reader]?.tag == id { polling.readers[tag.reader]?.tag = nil }
    var actions: [Action] = []
    if case .command(let token, let request, id, _) = polling.running {
      polling.running = nil
      actions += [.disarm(.command(token)), .emit(.response(request, .failed(.tagLost)))]
    }
    var kept: [Job] = []
    for job in polling.jobs[polling.nextJob...] {
      if case .command(let request, id, _) = job {
        actions.append(.emit(.response(request, .failed(.tagLost))))
      } else {
        kept.append(job)
      }
    }
    polling.jobs = kept
    polling.nextJob = 0
    if disconnect { actions.append(.disconnect(tag.card)) }
    actions.append(.emit(.tagRemoved(polling.round, id)))
    return actions
  }

  private mutating func removeReader(_ name: String, from polling: inout Polling) -> [Action] {
    var actions: [Action] = []
    if let id = polling.readers[name]?.tag { actions += removeTag(id, from: &polling, disconnect: true) }
    polling.readers[name] = nil
    return actions
  }

  /// Starts the next job when the card lane is free.
  private mutating func pump(_ polling: inout Polling) -> [Action] {
    var actions: [Action] = []
    while polling.running == nil, polling.nextJob < polling.jobs.count {
      let job = polling.jobs[polling.nextJob]
      polling.nextJob += 1
      if polling.nextJob > 64, polling.nextJob * 2 > polling.jobs.count {
        polling.jobs.removeFirst(polling.nextJob)
        polling.nextJob = 0
      }
      switch job {
      case .attach(let name, let counter, let atr):
        guard let reader = polling.readers[name], reader.state >> 16 == counter, Self.hasCard(reader.state) else {
          polling.readers[name]?.attaching = false
          continue
        }
        nextToken += 1
        polling.running = .attach(token: nextToken, reader: name, counter: counter, atr: atr)
        actions.append(.connect(name, nextToken))
      case .command(let request, let id, let operation):
        guard let tag = polling.tags[id] else {
          actions.append(.emit(.response(request, .failed(.tagLost))))
          continue
        }
        var procedure = TagProcedure(operation, on: tag.family)
        let step = procedure.start()
        actions += proceed(step, request, id, procedure, in: &polling)
      }
    }
    if polling.nextJob == polling.jobs.count {
      polling.jobs.removeAll(keepingCapacity: true)
      polling.nextJob = 0
    }
    return actions
  }

  /// Sends a procedure's next APDU, or answers its command.
  private mutating func proceed(
    _ step: TagStep, _ request: NFCRadioRequestID, _ id: NFCRadioTagID, _ procedure: TagProcedure,
    in polling: inout Polling
  ) -> [Action] {
    switch step {
    case .transmit(let apdu):
      guard let tag = polling.tags[id] else { return [.emit(.response(request, .failed(.tagLost)))] }
      nextToken += 1
      polling.running = .command(token: nextToken, request, id, procedure)
      return [.transmit(apdu, tag.card, nextToken), .arm(.command(nextToken), after: settings.commandTimeout)]
    case .finished(.success(let outcome)):
      let response: NFCRadioResponse
      switch outcome {
      case .status(let formatted, let writable, let capacity):
        response = .status(NFCRadioTagStatus(isNDEFFormatted: formatted, isWritable: writable, capacity: capacity))
      case .read(let bytes): response = .read(bytes)
      case .written: response = .written
      case .locked: response = .locked
      }
      return [.emit(.response(request, response))]
    case .finished(.failure(let failure)):
      var actions: [Action] = [.emit(.response(request, .failed(PCSCRadioFailure.tag(failure))))]
      // An answer cut short is the tag leaving in the middle of the command.
      if case .tagLost = failure { actions += removeTag(id, from: &polling, disconnect: true) }
      return actions
    }
  }
}
