internal import ReaderCore
import Synchronization

/// The reader system's driver: performs the actions of the system machine and of each session's
/// machine, talks to the radio, publishes events and calls delegates. It decides nothing: every rule
/// lives in `NFCSystemStateMachine` or `NFCSessionStateMachine`.
///
/// Confinement: every method runs on `scheduler` (the public types submit their calls there), one at a
/// time, which is what makes it `@unchecked Sendable`. Actions are performed as they come, so the
/// results one machine feeds to the other (a session releasing the radio, the system handing it on)
/// happen inside the same work item, in order.
final class NFCSystemEngine: @unchecked Sendable {
  /// What other threads may read without hopping onto the scheduler.
  struct Snapshot: Sendable, Equatable {
    var running: UInt64?
    var waiting = 0
  }

  let radio: any NFCRadio
  let scheduler: any Scheduler
  let snapshot = Mutex(Snapshot())
  private let observers = Mutex<(next: UInt64, byToken: [UInt64: @Sendable (NFCReaderEvent) -> Void])>((0, [:]))

  private var machine = NFCSystemStateMachine()
  /// Sessions begun and not yet released, kept alive as Core NFC keeps running sessions alive.
  private var live: [UInt64: NFCNDEFReaderSession] = [:]
  private var timers: [UInt64: ScheduledWork] = [:]

  init(radio: any NFCRadio, scheduler: any Scheduler) {
    self.radio = radio
    self.scheduler = scheduler
  }

  // MARK: Observers (any thread)

  func addObserver(_ observer: @escaping @Sendable (NFCReaderEvent) -> Void) -> UInt64 {
    observers.withLock { state in
      state.next += 1
      state.byToken[state.next] = observer
      return state.next
    }
  }

  func removeObserver(_ token: UInt64) {
    _ = observers.withLock { $0.byToken.removeValue(forKey: token) }
  }

  // MARK: The app's calls (on the scheduler)

  func begin(_ session: NFCNDEFReaderSession) {
    run(session.core, session.core.machine.begin(), session: session)
  }

  func invalidate(_ session: NFCNDEFReaderSession, errorMessage: String?) {
    run(session.core, session.core.machine.invalidate(errorMessage: errorMessage), session: session)
  }

  func setAlertMessage(_ message: String, of session: NFCNDEFReaderSession) {
    run(session.core, session.core.machine.setAlertMessage(message), session: session)
  }

  func restartPolling(_ session: NFCNDEFReaderSession) {
    run(session.core, session.core.machine.restartPolling(), session: session)
  }

  func perform(
    _ operation: NFCSessionStateMachine.Operation, on ref: NFCSessionStateMachine.TagRef,
    id op: NFCSessionStateMachine.OperationID, completion: @escaping SessionCore.Completion, in core: SessionCore
  ) {
    core.completions[op] = completion
    run(core, core.machine.perform(operation, on: ref, id: op), session: core.session)
  }

  // MARK: The radio (on the scheduler)

  func handle(_ event: NFCRadioEvent) {
    switch event {
    case .pollingStarted(let round):
      route(round) { $0.pollingStarted(round) }
    case .pollingFailed(let round, let failure):
      route(round) { $0.pollingFailed(round, failure) }
    case .tagsDetected(let round, let tags):
      route(round) { $0.tagsDetected(round, tags) }
    case .tagRemoved(let round, let tag):
      route(round) { $0.tagRemoved(round, tag) }
    case .response(let request, let response):
      route(request) { $0.response(request, response) }
    case .userCanceled(let round):
      route(round) { $0.userCanceled(round) }
    case .terminated:
      perform(machine.terminated())
    }
  }

  /// Hands a radio event to the session that issued the round or request; events of a session that
  /// has ended find nobody (its machine would absorb them anyway).
  private func route(
    _ request: NFCRadioRequestID, _ input: (inout NFCSessionStateMachine) -> [NFCSessionStateMachine.Action]
  ) {
    guard let session = live[request.session] else { return }
    run(session.core, input(&session.core.machine), session: session)
  }

  // MARK: Performing actions

  private func perform(_ actions: [NFCSystemStateMachine.Action]) {
    for action in actions {
      switch action {
      case .queued(let id, let position):
        if let session = live[id] { publish(.didQueue(position: position), of: session.core) }
      case .armTimeout(let id, let delay):
        timers[id] = scheduler.schedule(after: delay) { [self] in
          timers[id] = nil
          perform(machine.timeLimitReached(id))
        }
      case .disarmTimeout(let id):
        if let work = timers.removeValue(forKey: id) { scheduler.cancel(work) }
      case .activate(let id):
        if let session = live[id] { run(session.core, session.core.machine.activate(), session: session) }
      case .end(let id, let error):
        if let session = live[id] { run(session.core, session.core.machine.end(error), session: session) }
      }
    }
    snapshot.withLock { $0 = Snapshot(running: machine.running, waiting: machine.waitingCount) }
  }

  private func run(
    _ core: SessionCore, _ actions: [NFCSessionStateMachine.Action], session: NFCNDEFReaderSession?
  ) {
    for action in actions {
      switch action {
      case .submit:
        live[core.id] = session
        perform(machine.begin(core.id, policy: radio.policy, readingAvailable: radio.isReadingAvailable))
      case .release:
        live[core.id] = nil
        perform(machine.released(core.id))
      case .startPolling(let round):
        radio.startPolling(round)
      case .stopPolling(let round):
        radio.stopPolling(round)
      case .send(let command, let request):
        send(command, request)
      case .presentSheet(let message):
        radio.presentSheet(alertMessage: message)
      case .updateSheet(let message):
        radio.updateSheet(alertMessage: message)
      case .dismissSheet(let message):
        radio.dismissSheet(errorMessage: message)
      case .didBecomeActive:
        session?.markReady()
        publish(.didBecomeActive, of: core)
        deliver(to: session) { $0.readerSessionDidBecomeActive($1) }
      case .didDetectNDEFs(let messages):
        publish(.didDetectNDEFs(messages), of: core)
        deliver(to: session) { $0.readerSession($1, didDetectNDEFs: messages.map(NFCNDEFMessage.init)) }
      case .didDetectTags(let refs):
        let tags = refs.map { ref in
          let tag = NFCNDEFTag(ref: ref, core: core)
          core.tags[ref] = tag
          return tag
        }
        guard case .undecided = core.machine.mode else {
          publish(.didDetectTags(tags), of: core)
          deliver(to: session) { $0.readerSession($1, didDetect: tags) }
          continue
        }
        // Whether the delegate implements the method is known once it is offered the tags: the event
        // is published only if it does (otherwise the session goes on as a read-only one).
        let implemented = session.flatMap { session in core.delegate.map { core.offer(tags, to: $0, of: session) } }
        if implemented == true { publish(.didDetectTags(tags), of: core) }
        let settled = core.machine.tagDelegateAnswered(implemented: implemented == true)
        core.mode = core.machine.mode
        run(core, settled, session: session)
      case .didFailToReadNDEF(let error):
        publish(.didFailToReadNDEF(error), of: core)
        deliver(to: session) { $0.readerSession($1, didFailToReadNDEF: error) }
      case .tagsUnavailable(let refs):
        for ref in refs { core.tags.removeValue(forKey: ref)?.markUnavailable() }
      case .complete(let op, let outcome):
        if let completion = core.completions.removeValue(forKey: op) { core.delivery.run { completion(outcome) } }
      case .didInvalidate(let error):
        session?.markInvalidated()
        publish(.didInvalidate(error), of: core)
        deliver(to: session) { $0.readerSession($1, didInvalidateWithError: error) }
      }
    }
  }

  private func send(_ command: NFCSessionStateMachine.RadioCommand, _ request: NFCRadioRequestID) {
    switch command {
    case .connect(let tag): radio.connect(to: tag, request: request)
    case .queryNDEFStatus(let tag): radio.queryNDEFStatus(of: tag, request: request)
    case .readNDEF(let tag): radio.readNDEF(from: tag, request: request)
    case .writeNDEF(let bytes, let tag): radio.writeNDEF(bytes, to: tag, request: request)
    case .writeLock(let tag): radio.writeLock(tag, request: request)
    }
  }

  private func publish(_ kind: NFCReaderEvent.Kind, of core: SessionCore) {
    let event = NFCReaderEvent(time: scheduler.elapsed, session: core.id, kind: kind)
    let targets = observers.withLock { state in state.byToken.sorted { $0.key < $1.key }.map(\.value) }
    for observer in targets { observer(event) }
    core.publish(event)
  }

  private func deliver(
    to session: NFCNDEFReaderSession?,
    _ call: (any NFCNDEFReaderSessionDelegate, NFCNDEFReaderSession) -> Void
  ) {
    guard let session, let delegate = session.core.delegate else { return }
    session.core.delivery.run { call(delegate, session) }
  }
}
