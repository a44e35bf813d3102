internal import ReaderCore

/// Reads tags through as many sessions as it takes, following ``NFCReadLoopPolicy``: a timed-out
/// session is followed by a new one, a busy system is retried once, a cancel stops quietly.
///
/// It runs read-only sessions one after another on `system` (`invalidateAfterFirstRead` unless
/// `continuous`), hands every message read to `onMessages`, and ends once, through `completion`. It
/// decides nothing itself: what follows each session is the policy's decision.
///
/// ```swift
/// let loop = NFCReadLoop(system: system, continuous: true, onMessages: { print($0) }) { outcome in
///   print("reading ended:", outcome)
/// }
/// loop.start()
/// ```
public final class NFCReadLoop: Sendable {
  /// How the loop ended.
  public enum Outcome: Sendable, Hashable {
    /// A tag was read (single read).
    case finished
    /// The user cancelled, or `stop()` was called.
    case stopped
    /// Reading failed; tell the user why.
    case failed(NFCReaderError)
  }

  private struct State {
    var policy: NFCReadLoopPolicy
    var current: NFCNDEFReaderSession?
    /// The current session's delegate, which the session holds only weakly.
    var reader: Reader?
    var sessions = 0
    var stopping = false
    var done = false
  }

  /// The system the sessions run on.
  public let system: NFCReaderSystem
  private let alertMessage: String
  private let onMessages: @Sendable ([NDEFMessage]) -> Void
  private let completion: @Sendable (Outcome) -> Void
  private let state: Locked<State>

  /// Creates a loop; nothing happens until `start()`.
  /// - Parameters:
  ///   - continuous: keep reading after a tag was read; otherwise the first message read finishes it.
  ///   - alertMessage: what each session's sheet shows.
  ///   - onMessages: every message read, on the sessions' queue.
  ///   - completion: how the loop ended, once, on the last session's queue.
  public init(
    system: NFCReaderSystem = .shared, continuous: Bool = false, alertMessage: String = "",
    onMessages: @escaping @Sendable ([NDEFMessage]) -> Void,
    completion: @escaping @Sendable (Outcome) -> Void
  ) {
    self.system = system
    self.alertMessage = alertMessage
    self.onMessages = onMessages
    self.completion = completion
    state = Locked(State(policy: NFCReadLoopPolicy(continuous: continuous)))
  }

  /// How many sessions the loop has begun.
  public var sessionsBegun: Int { state.withLock { $0.sessions } }

  /// Begins the first session; does nothing when the loop has started.
  public func start() {
    guard state.withLock({ $0.sessions == 0 && !$0.done }) else { return }
    beginSession()
  }

  /// Ends the loop: the running session is invalidated and the loop completes with `stopped`.
  public func stop() {
    let session = state.withLock { state -> NFCNDEFReaderSession? in
      state.stopping = true
      return state.current
    }
    session?.invalidate()
  }

  /// The messages as an asynchronous sequence: the loop starts when iteration does, the sequence
  /// finishes when the loop finishes or is stopped, and throws the error of a failed loop. Ending the
  /// iteration stops the loop.
  public static func messages(
    system: NFCReaderSystem = .shared, continuous: Bool = false, alertMessage: String = ""
  ) -> AsyncThrowingStream<[NDEFMessage], any Error> {
    let (stream, continuation) = AsyncThrowingStream.makeStream(of: [NDEFMessage].self)
    let loop = NFCReadLoop(
      system: system, continuous: continuous, alertMessage: alertMessage,
      onMessages: { continuation.yield($0) },
      completion: { outcome in
        if case .failed(let error) = outcome {
          continuation.finish(throwing: error)
        } else {
          continuation.finish()
        }
      })
    continuation.onTermination = { _ in loop.stop() }
    loop.start()
    return stream
  }

  private func beginSession() {
    let reader = Reader(loop: self)
    let firstReadEnds = !state.withLock { $0.policy.continuous }
    let session = NFCNDEFReaderSession(
      delegate: reader, queue: nil, mode: .readOnly(invalidateAfterFirstRead: firstReadEnds),
      invalidateAfterFirstRead: firstReadEnds, system: system)
    session.alertMessage = alertMessage
    let stopped = state.withLock { state -> Bool in
      // `stop()` between two sessions: the next one is not begun.
      if state.stopping {
        state.done = true
        return true
      }
      state.current = session
      state.reader = reader
      state.sessions += 1
      return false
    }
    guard !stopped else {
      completion(.stopped)
      return
    }
    session.begin()
  }

  fileprivate func delivered(_ messages: [NDEFMessage]) {
    onMessages(messages)
  }

  fileprivate func ended(_ session: NFCNDEFReaderSession, with error: NFCReaderError) {
    let decision = state.withLock { state -> NFCReadLoopPolicy.Decision? in
      guard state.current === session, !state.done else { return nil }
      state.current = nil
      state.reader = nil
      let decision: NFCReadLoopPolicy.Decision = state.stopping ? .stopQuietly : state.policy.decision(after: error)
      if decision != .beginNewSession { state.done = true }
      return decision
    }
    switch decision {
    case nil: break
    case .beginNewSession?: beginSession()
    case .finish?: completion(.finished)
    case .stopQuietly?: completion(.stopped)
    case .report(let error)?: completion(.failed(error))
    }
  }
}

/// The delegate of one of the loop's sessions, kept by the loop while the session runs.
private final class Reader: NFCNDEFReaderSessionDelegate, Sendable {
  let loop: NFCReadLoop
  init(loop: NFCReadLoop) { self.loop = loop }

  func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {
    // Messages read from a tag convert back to exactly what was decoded.
    loop.delivered(messages.compactMap { try? NDEFMessage($0) })
  }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
    let error =
      error as? NFCReaderError
      ?? NFCReaderError(.readerSessionInvalidationErrorSessionTerminatedUnexpectedly, "\(error)")
    loop.ended(session, with: error)
  }
}
