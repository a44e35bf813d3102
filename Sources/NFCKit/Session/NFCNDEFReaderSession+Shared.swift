internal import ReaderCore
import Synchronization

/// What a session shares between the app's threads and the system's engine, its observers, and its mode
/// as one byte: the part of the session the engine works with besides its tag handles and completions.
extension NFCNDEFReaderSession {
  typealias Completion = @Sendable (NFCSessionStateMachine.Outcome) -> Void

  /// What the app's threads and the engine share, behind the session's one lock.
  struct Shared {
    /// The app-visible phase.
    var phase = NFCNDEFReaderSession.Phase.created
    /// The text on the sheet, as last set.
    var alertMessage = ""
    /// The session's observers, made when the first one subscribes (most sessions have none).
    var observers: ObserverRegistry<NFCReaderEvent>?
    /// The last event is out: no observer is kept or taken any more.
    var finished = false

    /// `didBecomeActive` is out: ready, unless the app invalidated the session meanwhile.
    mutating func becomeReady() {
      if phase == .begun { phase = .ready }
    }

    /// `didInvalidate` is out.
    mutating func becomeInvalidated() { phase = .invalidated }
  }

  /// Runs `body` with what the app's threads and the engine share, under the system's lock for this
  /// session (see `SessionLocks`): `body` must not call out.
  func withShared<Result: Sendable>(_ body: (inout Shared) -> Result) -> Result {
    // The session holds its system, which holds the locks: the lock outlives this call, and no reference
    // to the locks' object is held across `body`.
    SessionLocks.withLock(engine.sessionLocks.mutex(for: identifier)) { body(&sharedState) }
  }

  /// Whether detected tags go to the app, as far as is known (any thread).
  var mode: NFCSessionStateMachine.Mode {
    get { Self.mode(of: settledMode.load(ordering: .acquiring)) }
    set { settledMode.store(Self.code(of: newValue), ordering: .releasing) }
  }

  /// Offers `tags` to the delegate (on the session's queue) and says whether its own
  /// `readerSession(_:didDetect:)` ran, rather than the protocol's default.
  func offer(_ tags: [NFCNDEFTag], to delegate: any NFCNDEFReaderSessionDelegate) -> Bool {
    tagMethodMissing.store(false, ordering: .relaxed)
    delivery.run { delegate.readerSession(self, didDetect: tags) }
    return !tagMethodMissing.load(ordering: .relaxed)
  }

  /// Called by the default `readerSession(_:didDetect:)`.
  func noteTagMethodMissing() {
    tagMethodMissing.store(true, ordering: .relaxed)
  }

  // MARK: Observers (any thread)

  /// Adds an observer of this session's events; `nil` when the session has already ended.
  func addObserver(_ observer: @escaping @Sendable (NFCReaderEvent) -> Void) -> UInt64? {
    let registry = withShared { state -> ObserverRegistry<NFCReaderEvent>? in
      guard !state.finished else { return nil }
      if state.observers == nil { state.observers = ObserverRegistry<NFCReaderEvent>() }
      return state.observers
    }
    return registry?.add(observer)
  }

  func removeObserver(_ token: UInt64) {
    withShared { $0.observers }?.remove(token)
  }

  /// Calls the observers with `event` in registration order; after the session's last event, none
  /// is kept.
  func publish(_ event: NFCReaderEvent) {
    let last = event.isLast
    let registry = withShared { state in
      if last { state.finished = true }
      return state.observers
    }
    registry?.notify(event, last: last)
  }

  /// Calls the observers with an event of `kind`, now, after `change` has marked it in the shared state
  /// (the phase it brings), under the same lock; the event is made only when the session has observers.
  /// For a system nobody else observes: nothing can run between the change and the publication.
  func publish(_ kind: NFCReaderEvent.Kind, changing change: (inout Shared) -> Void) {
    let last = kind.isLast
    let registry = withShared { state in
      change(&state)
      if last { state.finished = true }
      return state.observers
    }
    guard let registry else { return }
    registry.notify(NFCReaderEvent(time: engine.scheduler.elapsed, session: identifier, kind: kind), last: last)
  }

  // MARK: The mode as one byte

  static func code(of mode: NFCSessionStateMachine.Mode) -> UInt8 {
    switch mode {
    case .readOnly(let once): once ? 1 : 0
    case .readWrite: 2
    case .undecided(let once): once ? 4 : 3
    }
  }

  private static func mode(of code: UInt8) -> NFCSessionStateMachine.Mode {
    switch code {
    case 0, 1: .readOnly(invalidateAfterFirstRead: code == 1)
    case 2: .readWrite
    default: .undecided(invalidateAfterFirstRead: code == 4)
    }
  }
}
