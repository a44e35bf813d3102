import Dispatch
import Synchronization
internal import ReaderCore

/// A session that reads NDEF tags: Core NFC's `NFCNDEFReaderSession`, on an `NFCReaderSystem`.
///
/// A session is single-use. `begin()` hands it to its system, which runs one session at a time: a
/// session begun while another runs waits in line (FIFO) and becomes active when those before it
/// have ended (or, on a system whose policy is `.refuse`, ends at once with
/// `readerSessionInvalidationErrorSystemIsBusy`). Once active it polls: `readerSessionDidBecomeActive`,
/// then detections. It ends for exactly one reason, reported once through
/// `readerSession(_:didInvalidateWithError:)`, after which nothing reaches the delegate:
///
/// | code | when |
/// |---|---|
/// | `readerSessionInvalidationErrorFirstNDEFTagRead` (204) | an `invalidateAfterFirstRead` read-only session read its first message |
/// | `readerSessionInvalidationErrorUserCanceled` (200) | the user tapped Cancel, or the app called `invalidate()` / `invalidate(errorMessage:)` |
/// | `readerSessionInvalidationErrorSessionTimeout` (201) | the system's time limit, counted from `begin()` (waiting in line counts) |
/// | `readerSessionInvalidationErrorSystemIsBusy` (203) | the system refused the session: another app holds the radio, or another session runs on a `.refuse` system |
/// | `readerSessionInvalidationErrorSessionTerminatedUnexpectedly` (202) | the system ended it, e.g. the app moved to the background |
/// | `readerErrorUnsupportedFeature` (1) | begun on a system that cannot read tags (`readingAvailable` is false) |
/// | `readerErrorRadioDisabled` (6) | the radio was off when the session started, or went off while it ran |
///
/// **The app's own `invalidate()` reports 200**, the user-cancel code, as Core NFC does: there is no
/// separate code for it, apps already treat 200 as "closed, show nothing", and the app knows it asked
/// (`context["by"]` is `"app"`, against `"user"` for the sheet's Cancel button). A session invalidated
/// **while it waits in line** gets 200 at once and leaves the line; one whose time runs out **while it
/// waits** gets 201 (`context["while"] == "waiting"`). An invalidated session cannot be begun again:
/// `begin()` then does nothing and returns `readerTransceiveErrorSessionInvalidated` — the delegate,
/// which has had its `didInvalidateWithError`, hears nothing more.
///
/// Delegate calls and completion handlers run on the queue given (a private serial queue when `nil`).
/// The system waits for each to return, so what a callback asks of the session is ordered right after
/// it; on a `VirtualClock` a run is deterministic. Every call may come from any thread.
///
/// ```swift
/// let session = NFCNDEFReaderSession(delegate: self, queue: nil, invalidateAfterFirstRead: true)
/// session.alertMessage = "Hold your iPhone near the tag."
/// session.begin()
/// ```
///
/// Confinement (what makes it `@unchecked Sendable`): `completions` and `tags` are touched only on the
/// system's scheduler, by the engine, one work item at a time; the shared state (the phase, the alert
/// message, the observers) only under the system's lock for this session (`withShared`); the rest is
/// immutable or atomic, and the delegate is set once, before the session is shared.
public final class NFCNDEFReaderSession: @unchecked Sendable, Hashable, CustomStringConvertible {
  /// The app-visible phase, readable from any thread.
  enum Phase: Equatable {
    case created
    case begun
    case ready
    case invalidated
  }

  /// The session's number in its system, from 1 (the `session` of its events).
  public let identifier: UInt64
  /// Whether a read-only session ends after its first message.
  public let invalidateAfterFirstRead: Bool
  /// The system the session runs on.
  public let system: NFCReaderSystem
  /// The system's engine, which every call of the session goes to.
  let engine: NFCSystemEngine
  /// Where delegate calls and completion handlers run.
  let delivery: DeliveryQueue
  /// The delegate (held weakly, as Core NFC holds it). It is called only on the session's queue, which
  /// is why it need not be `Sendable`. Set once, in the initializer, before the session is shared: reading
  /// it (at every delivery) skips the runtime's check of exclusive access. (A `weak let` would say the same,
  /// but needs Swift 6.2, and the package builds with 6.0.)
  @exclusivity(unchecked) public private(set) weak var delegate: (any NFCNDEFReaderSessionDelegate)?

  // The engine's, on the scheduler only, one work item at a time, which is what excludes other
  // accesses: the runtime's check of exclusive access is left out.
  /// The completions of the app's tag operations not yet answered.
  @exclusivity(unchecked) var completions: [NFCSessionStateMachine.OperationID: Completion] = [:]
  /// The tag handles given out and still available.
  @exclusivity(unchecked) var tags: [NFCSessionStateMachine.TagRef: NFCNDEFTag] = [:]

  /// The last operation's number.
  let operations = Atomic<UInt64>(0)
  /// Guarded by the system's lock for this session (`withShared`), which is what excludes other
  /// accesses: the runtime's check of exclusive access is left out.
  @exclusivity(unchecked) var sharedState = Shared()
  /// The mode as last settled (`Self.code(of:)`), for `detectsTags` on any thread.
  let settledMode: Atomic<UInt8>
  /// Set by the default `readerSession(_:didDetect:)`: the delegate has no method of its own.
  let tagMethodMissing = Atomic<Bool>(false)
  /// What the session was created as (read-only, read-write, or not known until the first tags).
  /// Stored last, beside the other one-byte fields, so padding does not put every session in the next
  /// allocation size.
  let initialMode: NFCSessionStateMachine.Mode

  /// Creates a session on the per-process system (`NFCReaderSystem.shared`).
  /// - Parameters:
  ///   - delegate: receives the session's events; held weakly. A delegate whose class implements
  ///     `readerSession(_:didDetect:)` makes a read-write session, as in Core NFC: the first tags
  ///     detected are offered to it, and if the protocol's default ran instead (the class has no such
  ///     method) the session reads them and goes on as a read-only session. Adopting
  ///     ``NFCNDEFReaderSessionTagDelegate`` says read-write from the start.
  ///   - queue: where callbacks run; `nil` for a private serial queue.
  ///   - invalidateAfterFirstRead: whether a read-only session ends after its first message (with
  ///     `readerSessionInvalidationErrorFirstNDEFTagRead`). Ignored by read-write sessions.
  public convenience init(
    delegate: any NFCNDEFReaderSessionDelegate, queue: DispatchQueue?, invalidateAfterFirstRead: Bool
  ) {
    self.init(delegate: delegate, queue: queue, invalidateAfterFirstRead: invalidateAfterFirstRead, system: .shared)
  }

  /// Creates a session on `system`; see `init(delegate:queue:invalidateAfterFirstRead:)`.
  public convenience init(
    delegate: any NFCNDEFReaderSessionDelegate, queue: DispatchQueue? = nil, invalidateAfterFirstRead: Bool,
    system: NFCReaderSystem
  ) {
    self.init(
      delegate: delegate, queue: queue,
      mode: Self.adoptsTagDelegate(delegate)
        ? .readWrite : .undecided(invalidateAfterFirstRead: invalidateAfterFirstRead),
      invalidateAfterFirstRead: invalidateAfterFirstRead, system: system)
  }

  /// Whether `delegate`'s class adopts ``NFCNDEFReaderSessionTagDelegate``. The answer for the last class
  /// asked about is kept, in one word with the class's metadata address (aligned, so its low bit is
  /// free for the answer): an app makes its sessions with delegates of one class, and asking the
  /// runtime costs a search of its conformance cache per session.
  static func adoptsTagDelegate(_ delegate: any NFCNDEFReaderSessionDelegate) -> Bool {
    let type = UInt(bitPattern: ObjectIdentifier(type(of: delegate)))
    let last = lastDelegateClass.load(ordering: .relaxed)
    if last & ~1 == type { return last & 1 == 1 }
    let adopts = delegate is any NFCNDEFReaderSessionTagDelegate
    lastDelegateClass.store(type | (adopts ? 1 : 0), ordering: .relaxed)
    return adopts
  }

  private static let lastDelegateClass = Atomic<UInt>(0)

  /// Creates a session without a delegate, for the async form: follow it with `events()`, which
  /// carries the same events (`didDetectTags` when `detectsTags`, `didDetectNDEFs` otherwise).
  public convenience init(
    queue: DispatchQueue? = nil, invalidateAfterFirstRead: Bool, detectsTags: Bool = false,
    system: NFCReaderSystem = .shared
  ) {
    self.init(
      delegate: nil, queue: queue,
      mode: detectsTags ? .readWrite : .readOnly(invalidateAfterFirstRead: invalidateAfterFirstRead),
      invalidateAfterFirstRead: invalidateAfterFirstRead, system: system)
  }

  /// Creates a session whose delegate's kind is known (the read loop's reads messages only).
  init(
    delegate: (any NFCNDEFReaderSessionDelegate)?, queue: DispatchQueue?, mode: NFCSessionStateMachine.Mode,
    invalidateAfterFirstRead: Bool, system: NFCReaderSystem
  ) {
    identifier = system.nextSessionID()
    self.invalidateAfterFirstRead = invalidateAfterFirstRead
    self.system = system
    engine = system.engine
    delivery = DeliveryQueue(queue)
    self.delegate = delegate
    initialMode = mode
    settledMode = Atomic(Self.code(of: mode))
  }

  /// Whether this device can read NDEF tags at all, on the per-process system. Check it before
  /// creating a session; a session begun without it ends with `readerErrorUnsupportedFeature`. It is a
  /// capability: a radio that is merely off still reads as available (such a session ends with
  /// `readerErrorRadioDisabled`).
  public class var readingAvailable: Bool { NFCReaderSystem.shared.readingAvailable }

  /// The queue delegate calls and completion handlers run on.
  public var sessionQueue: DispatchQueue { delivery.queue }

  /// Whether the session polls: from `didBecomeActive` until it ends (or `invalidate()` is called).
  public var isReady: Bool { withShared { $0.phase == .ready } }

  /// Whether the session reports tags to the app (a read-write session) rather than messages. For a
  /// delegate that does not adopt ``NFCNDEFReaderSessionTagDelegate`` it is known at the first
  /// detection (whether the delegate's class implements `readerSession(_:didDetect:)`); false until then.
  public var detectsTags: Bool { mode == .readWrite }

  /// The text on the system's scan sheet. Set it before `begin()`, or at any time while the session
  /// runs: the sheet shows the change at once.
  public var alertMessage: String {
    get { withShared { $0.alertMessage } }
    set {
      // Submitted under the lock, so concurrent sets reach the sheet in the order they were stored.
      withShared { front in
        front.alertMessage = newValue
        run { [self] in engine.setAlertMessage(newValue, of: self) }
      }
    }
  }

  /// Shows the sheet and starts polling — or, while another session runs, queues the session (see
  /// the type's documentation). Does nothing on a session already begun.
  ///
  /// - Returns: `nil`, or `readerTransceiveErrorSessionInvalidated` when the session was invalidated:
  ///   sessions are single-use, so nothing happens and nothing reaches the delegate; create a new one.
  @discardableResult
  public func begin() -> NFCReaderError? {
    // Submitted under the lock with the alert message as it stands, so an `alertMessage` set on another
    // thread reaches the session either with `begin()` or after it, never before it and lost.
    let phase = withShared { front -> Phase in
      let phase = front.phase
      if phase == .created {
        front.phase = .begun
        let alertMessage = front.alertMessage
        if alertMessage.isEmpty {
          // Nothing to carry but the session (the usual begin): see `invalidate(showing:)`.
          run { [self] in engine.begin(self, alertMessage: "") }
        } else {
          run { [self] in engine.begin(self, alertMessage: alertMessage) }
        }
      }
      return phase
    }
    switch phase {
    case .created:
      return nil
    case .begun, .ready:
      return nil
    case .invalidated:
      return NFCReaderError(
        .readerTransceiveErrorSessionInvalidated, "the session was invalidated; sessions are single-use",
        context: ["operation": "begin", "reason": "sessionInvalidated"])
    }
  }

  /// Ends the session: the sheet closes and the delegate gets `readerSessionInvalidationErrorUserCanceled`
  /// (see the type's documentation for why that code). `isReady` is false from the call on. Does
  /// nothing on a session already ended.
  public func invalidate() {
    invalidate(showing: nil)
  }

  /// Ends the session, the sheet showing `errorMessage` as it closes; otherwise as `invalidate()`.
  public func invalidate(errorMessage: String) {
    invalidate(showing: errorMessage)
  }

  /// Starts a new polling round in a read-write session: the tags reported so far become stale (their
  /// operations fail with `readerTransceiveErrorTagConnectionLost`) and tags in the field are reported
  /// again. No effect on read-only sessions (they restart by themselves as tags leave) or on a session
  /// that does not poll.
  public func restartPolling() {
    run { [self] in engine.restartPolling(self) }
  }

  /// Connects `tag` so it can be queried, read and written; connecting another tag releases this one.
  /// Connecting the connected tag succeeds at once. Fails with an ``NFCReaderError`` with one of the
  /// codes listed on ``NFCNDEFTag``.
  public func connect(to tag: NFCNDEFTag, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
    perform(.connect, on: tag) { outcome in
      switch outcome {
      case .connected: completionHandler(nil)
      case .failed(let error): completionHandler(error)
      case .status, .message, .done: completionHandler(NFCNDEFTag.mismatch(outcome))
      }
    }
  }

  /// Connects `tag`; see `connect(to:completionHandler:)`.
  public func connect(to tag: NFCNDEFTag) async throws(NFCReaderError) {
    try await awaitOutcome(.connect, on: tag) { outcome throws(NFCReaderError) in
      switch outcome {
      case .connected: return
      case .failed(let error): throw error
      case .status, .message, .done: throw NFCNDEFTag.mismatch(outcome)
      }
    }
  }

  /// The session's events from now on, in order; the stream finishes after `didInvalidate` (at once
  /// if the session has already ended). Subscribe before `begin()` to see them all.
  public func events() -> AsyncStream<NFCReaderEvent> {
    let (stream, continuation) = AsyncStream.makeStream(of: NFCReaderEvent.self)
    guard
      let token = addObserver({ event in
        continuation.yield(event)
        if case .didInvalidate = event.kind { continuation.finish() }
      })
    else {
      continuation.finish()
      return stream
    }
    // Weakly: a stream that never ends (a session never begun) must not keep the session alive.
    continuation.onTermination = { [weak self] _ in self?.removeObserver(token) }
    return stream
  }

  /// `NFCNDEFReaderSession(identifier)`.
  public var description: String { "NFCNDEFReaderSession(\(identifier))" }

  public static func == (lhs: NFCNDEFReaderSession, rhs: NFCNDEFReaderSession) -> Bool { lhs === rhs }
  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

  // MARK: Engine side

  private func invalidate(showing errorMessage: String?) {
    withShared { front in
      let begun = front.phase != .created
      front.phase = .invalidated
      // A closure that captures the session alone has the session itself as its context, where one that
      // carries more allocates a context for it: the usual call, with no message, carries nothing else.
      switch (errorMessage, begun) {
      case (nil, true): run { [self] in engine.invalidate(self, errorMessage: nil, begun: true) }
      case (nil, false): run { [self] in engine.invalidate(self, errorMessage: nil, begun: false) }
      default: run { [self] in engine.invalidate(self, errorMessage: errorMessage, begun: begun) }
      }
    }
  }

  /// Runs an operation on `tag` (any thread); `completion` runs on the session's queue.
  func perform(
    _ operation: NFCSessionStateMachine.Operation, on tag: NFCNDEFTag,
    completion: @escaping Completion
  ) {
    let op = operations.add(1, ordering: .relaxed).newValue
    let ref = tag.ref
    run { [self] in engine.perform(operation, on: ref, id: op, completion: completion, in: self) }
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

  /// Completes an operation that failed before it reached the session (an invalid argument), on the
  /// session's queue, in order with the system's work.
  func reject(_ error: NFCReaderError, completion: @escaping Completion) {
    run { [self] in delivery.run { completion(.failed(error)) } }
  }

  /// Submits `work` to the system's scheduler, where the engine runs (one closure, made by the caller).
  private func run(_ work: @escaping @Sendable () -> Void) {
    engine.scheduler.execute(work)
  }
}
