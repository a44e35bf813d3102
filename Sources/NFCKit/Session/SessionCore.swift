import Synchronization

/// The part of a session the system's engine drives: its state machine, the completions and tag
/// handles it has given out, and where its callbacks run.
///
/// Confinement: `machine`, `completions` and `tags` are touched only on the system's scheduler, by
/// the engine, one work item at a time — which is what makes this `@unchecked Sendable`. The rest is
/// immutable or behind a lock.
final class SessionCore: @unchecked Sendable {
  typealias Completion = @Sendable (NFCSessionStateMachine.Outcome) -> Void

  let id: UInt64
  let engine: NFCSystemEngine
  let delivery: DeliveryQueue
  /// The session, for delegate calls; the engine keeps begun sessions alive until they end.
  weak var session: NFCNDEFReaderSession?
  /// The delegate, held weakly as Core NFC holds it. Set once, before the session is shared; it is
  /// called only on the session's queue, which is why it need not be `Sendable`.
  weak var delegate: (any NFCNDEFReaderSessionDelegate)?

  // On the scheduler only.
  var machine: NFCSessionStateMachine
  var completions: [NFCSessionStateMachine.OperationID: Completion] = [:]
  var tags: [NFCSessionStateMachine.TagRef: NFCNDEFTag] = [:]

  private let operations = Atomic<UInt64>(0)
  private let observers = Mutex(Observers())
  /// The machine's mode as last settled, for `detectsTags` on any thread.
  private let settledMode: Mutex<NFCSessionStateMachine.Mode>
  /// Set by the default `readerSession(_:didDetect:)`: the delegate has no method of its own.
  private let tagMethodMissing = Atomic<Bool>(false)

  private struct Observers {
    var finished = false
    var next: UInt64 = 0
    var byToken: [UInt64: @Sendable (NFCReaderEvent) -> Void] = [:]
  }

  init(id: UInt64, engine: NFCSystemEngine, delivery: DeliveryQueue, machine: NFCSessionStateMachine) {
    self.id = id
    self.engine = engine
    self.delivery = delivery
    self.settledMode = Mutex(machine.mode)
    self.machine = machine
  }

  /// Whether detected tags go to the app, as far as is known (any thread).
  var mode: NFCSessionStateMachine.Mode {
    get { settledMode.withLock { $0 } }
    set { settledMode.withLock { $0 = newValue } }
  }

  /// Offers `tags` to the delegate (on the session's queue) and says whether its own
  /// `readerSession(_:didDetect:)` ran, rather than the protocol's default.
  func offer(_ tags: [NFCNDEFTag], to delegate: any NFCNDEFReaderSessionDelegate, of session: NFCNDEFReaderSession)
    -> Bool
  {
    tagMethodMissing.store(false, ordering: .relaxed)
    delivery.run { delegate.readerSession(session, didDetect: tags) }
    return !tagMethodMissing.load(ordering: .relaxed)
  }

  /// Called by the default `readerSession(_:didDetect:)`.
  func noteTagMethodMissing() {
    tagMethodMissing.store(true, ordering: .relaxed)
  }

  /// Completes an operation that failed before it reached the session (an invalid argument), on the
  /// session's queue, in order with the engine's work.
  func reject(_ error: NFCReaderError, completion: @escaping Completion) {
    engine.scheduler.execute { [delivery] in delivery.run { completion(.failed(error)) } }
  }

  /// Runs an operation on `tag` (any thread); `completion` runs on the session's queue.
  func perform(_ operation: NFCSessionStateMachine.Operation, on tag: NFCNDEFTag, completion: @escaping Completion) {
    let op = operations.add(1, ordering: .relaxed).newValue
    let ref = tag.ref
    engine.scheduler.execute { [self] in engine.perform(operation, on: ref, id: op, completion: completion, in: self) }
  }

  /// Runs an operation on `tag` and maps its outcome.
  func awaitOutcome<T>(
    _ operation: NFCSessionStateMachine.Operation, on tag: NFCNDEFTag,
    _ map: (NFCSessionStateMachine.Outcome) throws(NFCReaderError) -> T
  ) async throws(NFCReaderError) -> T {
    let outcome = await withCheckedContinuation {
      (continuation: CheckedContinuation<NFCSessionStateMachine.Outcome, Never>) in
      perform(operation, on: tag) { continuation.resume(returning: $0) }
    }
    return try map(outcome)
  }

  // MARK: Observers (any thread)

  /// Adds an observer of this session's events; `nil` when the session has already ended.
  func addObserver(_ observer: @escaping @Sendable (NFCReaderEvent) -> Void) -> UInt64? {
    observers.withLock { state in
      guard !state.finished else { return nil }
      state.next += 1
      state.byToken[state.next] = observer
      return state.next
    }
  }

  func removeObserver(_ token: UInt64) {
    _ = observers.withLock { $0.byToken.removeValue(forKey: token) }
  }

  /// Calls the observers with `event` in registration order; after the session's last event, none
  /// is kept.
  func publish(_ event: NFCReaderEvent) {
    let last: Bool
    if case .didInvalidate = event.kind { last = true } else { last = false }
    let targets = observers.withLock { state -> [@Sendable (NFCReaderEvent) -> Void] in
      let targets = state.byToken.sorted { $0.key < $1.key }.map(\.value)
      if last {
        state.finished = true
        state.byToken = [:]
      }
      return targets
    }
    for observer in targets { observer(event) }
  }
}
