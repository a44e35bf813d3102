internal import ReaderCore
import Synchronization

/// The reader system's driver: feeds every input to the system's machine (`NFCSystemStateMachine`) and
/// performs the actions that come back, in order — talks to the radio, arms time limits, publishes
/// events and calls delegates. It decides nothing: every rule lives in the system's machine or in a
/// session's.
///
/// Confinement: every method runs on `scheduler` (the public types submit their calls there), one at a
/// time, which is what makes it `@unchecked Sendable`.
final class NFCSystemEngine: @unchecked Sendable {
  let radio: any NFCRadio
  let scheduler: any Scheduler
  /// What other threads may read without hopping onto the scheduler, each on its own (atomics rather
  /// than a lock: the line changes at nearly every input, and each read is of one value): the running
  /// session's identifier (0: none; identifiers start at 1) and how many wait.
  let runningSnapshot = Atomic<UInt64>(0)
  let waitingSnapshot = Atomic<Int>(0)
  let observers = ObserverRegistry<NFCReaderEvent>()
  /// The tokens of the system's observers still registered: no event is built for nobody.
  private let observerTokens = Locked<Set<UInt64>>([])
  private let hasObservers = Atomic<Bool>(false)
  /// The locks of the sessions' shared state.
  let sessionLocks = SessionLocks()

  // On the scheduler only, one work item at a time, which is what excludes other accesses: the runtime's
  // check of exclusive access, made at every use, is left out.
  @exclusivity(unchecked) private var machine = NFCSystemStateMachine()
  /// Sessions begun and not yet ended, kept alive as Core NFC keeps running sessions alive.
  @exclusivity(unchecked) private var live = SessionTable<NFCNDEFReaderSession>()
  @exclusivity(unchecked) private var timers = SessionTable<ScheduledWork>()
  /// An empty array of actions with room, handed to the machine for the next input.
  @exclusivity(unchecked) private var spareActions: [NFCSystemStateMachine.Action] = []
  /// The last error a delegate's `didInvalidateWithError` got, and the `any Error` box it got it in
  /// (`boxed(_:)`).
  @exclusivity(unchecked) private var lastInvalidation: (error: NFCReaderError, box: any Error)?

  init(radio: any NFCRadio, scheduler: any Scheduler) {
    self.radio = radio
    self.scheduler = scheduler
  }

  // MARK: The system's observers (any thread)

  /// Adds an observer of every session's events; returns its token.
  func addObserver(_ observer: @escaping @Sendable (NFCReaderEvent) -> Void) -> UInt64? {
    guard let token = observers.add(observer) else { return nil }
    observerTokens.withLock { tokens in
      tokens.insert(token)
      hasObservers.store(true, ordering: .releasing)
    }
    return token
  }

  /// Removes an observer; nothing when it is gone already.
  func removeObserver(_ token: UInt64) {
    observers.remove(token)
    observerTokens.withLock { tokens in
      tokens.remove(token)
      hasObservers.store(!tokens.isEmpty, ordering: .releasing)
    }
  }

  // MARK: The app's calls (on the scheduler)

  /// `begin()`, with the alert message as it stood when it was called.
  func begin(_ session: NFCNDEFReaderSession, alertMessage: String) {
    live[session.identifier] = session
    handle(
      .begin(
        session.identifier, mode: session.initialMode, alertMessage: alertMessage, policy: radio.policy,
        unavailable: radio.isReadingAvailable ? nil : radio.unavailableReason),
      from: session)
  }

  func invalidate(_ session: NFCNDEFReaderSession, errorMessage: String?, begun: Bool) {
    handle(.invalidate(session.identifier, errorMessage: errorMessage, begun: begun), from: session)
  }

  func setAlertMessage(_ message: String, of session: NFCNDEFReaderSession) {
    handle(.setAlertMessage(session.identifier, message), from: session)
  }

  func restartPolling(_ session: NFCNDEFReaderSession) {
    handle(.restartPolling(session.identifier), from: session)
  }

  func perform(
    _ operation: NFCSessionStateMachine.Operation, on ref: NFCSessionStateMachine.TagRef,
    id op: NFCSessionStateMachine.OperationID, completion: @escaping NFCNDEFReaderSession.Completion,
    in session: NFCNDEFReaderSession
  ) {
    session.completions[op] = completion
    handle(.perform(session.identifier, operation, on: ref, id: op), from: session)
  }

  // MARK: The radio (on the scheduler)

  func handle(_ event: NFCRadioEvent) {
    handle(.radio(event), from: nil)
  }

  // MARK: Performing actions

  /// Feeds `input` to the machine and performs what it asks. `caller`: the session whose call it is,
  /// for the actions of a session the system keeps nothing for (never begun, or ended).
  private func handle(_ input: consuming NFCSystemStateMachine.Input, from caller: NFCNDEFReaderSession?) {
    // The buffer is lent to the machine and taken back emptied, so an input allocates no array of
    // actions; an input handled while the actions of another are being performed gets its own.
    var actions = spareActions
    spareActions = []
    machine.handle(input, into: &actions)
    perform(&actions, caller: caller)
    actions.empty()
    spareActions = actions
    runningSnapshot.store(machine.running ?? 0, ordering: .releasing)
    waitingSnapshot.store(machine.waitingCount, ordering: .releasing)
  }

  /// Performs `actions` in order; a session's action is moved out of the buffer (`ended(0)` is left in its
  /// place), not copied: the caller empties the buffer next.
  private func perform(_ actions: inout [NFCSystemStateMachine.Action], caller: NFCNDEFReaderSession?) {
    // By index: an action is read where it lies, not copied into a loop variable first.
    for index in actions.indices {
      switch actions[index] {
      case .queued(let id, let position):
        if let session = session(id, caller) { publish(.didQueue(position: position), of: session) }
      case .armTimeout(let id, let delay):
        timers[id] = scheduler.schedule(after: delay) { [self] in
          timers[id] = nil
          handle(.timeLimitReached(id), from: nil)
        }
      case .disarmTimeout(let id):
        if let work = timers.removeValue(forKey: id) { scheduler.cancel(work) }
      case .session(let id, _):
        // The caller's own action (the usual case) is performed with the caller as it is lent to this
        // call, with no reference of its own taken for it.
        if let caller, caller.identifier == id {
          perform(Self.sessionAction(at: index, of: &actions), of: caller)
        } else if let session = live[id] {
          perform(Self.sessionAction(at: index, of: &actions), of: session)
        }
      case .offerTags(let id, let refs):
        guard let session = session(id, caller) else { continue }
        let tags = handOut(refs, of: session)
        let implemented = session.delegate.map { session.offer(tags, to: $0) } ?? false
        handle(.tagDelegateAnswered(id, implemented: implemented, offered: refs), from: session)
      case .publishTags(let id, let refs):
        guard let session = session(id, caller) else { continue }
        publish(.didDetectTags(refs.compactMap { session.tags[$0] }), of: session)
      case .modeSettled(let id, let mode):
        session(id, caller)?.mode = mode
      case .ended(let id):
        // Its handles are all unavailable by now; dropping them also ends the cycle tag → session → tags.
        live.removeValue(forKey: id)?.tags.removeAll()
      }
    }
  }

  /// The session's action at `index` of `actions`, a `session` action, moved out (`ended(0)` is left in
  /// its place).
  private static func sessionAction(
    at index: Int, of actions: inout [NFCSystemStateMachine.Action]
  ) -> NFCSessionStateMachine.Action {
    guard case .session(_, let action) = actions.take(at: index, leaving: .ended(0)) else {
      preconditionFailure("not a session's action")
    }
    return action
  }

  /// The session an action is for: a begun one the system keeps, or the caller.
  private func session(_ id: UInt64, _ caller: NFCNDEFReaderSession?) -> NFCNDEFReaderSession? {
    // Identifiers are unique in a system, so a caller with the identifier is the session kept, if any.
    if let caller, caller.identifier == id { return caller }
    return live[id]
  }

  private func perform(_ action: consuming NFCSessionStateMachine.Action, of session: NFCNDEFReaderSession) {
    switch consume action {
    case .submit, .release:
      break  // Routed by the system's machine.
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
      publish(.didBecomeActive, of: session) { $0.becomeReady() }
      deliver(to: session) { $0.readerSessionDidBecomeActive($1) }
    case .didDetectNDEFs(let messages):
      publish(.didDetectNDEFs(messages), of: session)
      deliver(to: session) { $0.readerSession($1, didDetectNDEFs: messages.map(NFCNDEFMessage.init)) }
    case .didDetectTags(let refs):
      let tags = handOut(refs, of: session)
      publish(.didDetectTags(tags), of: session)
      deliver(to: session) { $0.readerSession($1, didDetect: tags) }
    case .didFailToReadNDEF(let error):
      publish(.didFailToReadNDEF(error), of: session)
      deliver(to: session) { $0.readerSession($1, didFailToReadNDEF: error) }
    case .tagsUnavailable(let refs):
      for ref in refs { session.tags.removeValue(forKey: ref)?.markUnavailable() }
    case .complete(let op, let outcome):
      if let completion = session.completions.removeValue(forKey: op) { session.delivery.run { completion(outcome) } }
    case .didInvalidate(let error):
      publish(.didInvalidate(error), of: session) { $0.becomeInvalidated() }
      let box = boxed(error)
      deliver(to: session) { $0.readerSession($1, didInvalidateWithError: box) }
    }
  }

  /// `error` as the `any Error` a delegate's `didInvalidateWithError` takes: the box made for the last
  /// invalidation when `error` is a copy of that one (sessions mostly end for the same reason, built
  /// once, like the app's own `invalidate()`), so such an end allocates no box. A box is immutable and
  /// an error's identity is not part of its value, so a delegate cannot tell.
  private func boxed(_ error: NFCReaderError) -> any Error {
    if let last = lastInvalidation, last.error.sharesStorage(with: error) { return last.box }
    let box: any Error = error
    lastInvalidation = (error, box)
    return box
  }

  /// The handles of new tags, kept until they become unavailable.
  private func handOut(_ refs: [NFCSessionStateMachine.TagRef], of session: NFCNDEFReaderSession) -> [NFCNDEFTag] {
    refs.map { ref in
      let tag = NFCNDEFTag(ref: ref, session: session)
      session.tags[ref] = tag
      return tag
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

  /// Publishes an event of the session that changes nothing in its shared state.
  private func publish(_ kind: NFCReaderEvent.Kind, of session: NFCNDEFReaderSession) {
    publish(kind, of: session, changesShared: false) { _ in }
  }

  /// Publishes an event of the session to the system's observers, then to the session's; `change`
  /// first marks in the session's shared state what the event brings (its phase). `changesShared`
  /// false: `change` does nothing, and no lock is taken for it before the system's observers.
  private func publish(
    _ kind: NFCReaderEvent.Kind, of session: NFCNDEFReaderSession, changesShared: Bool = true,
    changing change: (inout NFCNDEFReaderSession.Shared) -> Void
  ) {
    guard hasObservers.load(ordering: .acquiring) else {
      // Nobody else to call first: one lock for the change and the session's observers, and no event
      // made for nobody.
      session.publish(kind, changing: change)
      return
    }
    if changesShared { session.withShared(change) }
    let event = NFCReaderEvent(time: scheduler.elapsed, session: session.identifier, kind: kind)
    observers.notify(event)
    session.publish(event)
  }

  private func deliver(
    to session: NFCNDEFReaderSession,
    _ call: (any NFCNDEFReaderSessionDelegate, NFCNDEFReaderSession) -> Void
  ) {
    guard let delegate = session.delegate else { return }
    session.delivery.run { call(delegate, session) }
  }
}
