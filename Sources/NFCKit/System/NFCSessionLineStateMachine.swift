/// The line of reader sessions, one of the two children of the system's machine
/// (`NFCSystemStateMachine`): which session holds the radio, which wait for it (first in, first out),
/// and when each one's time is up. It knows sessions by their identifiers only; what a session does
/// with the radio is its own machine's business.
///
/// Pure: inputs in, actions out. Rules:
/// - A session begun without the reading capability ends at once (`readerErrorUnsupportedFeature`).
/// - A session begun while the radio is free gets it. One begun while another holds it waits in line
///   (policy `.queue`) or ends at once with `readerSessionInvalidationErrorSystemIsBusy` (`.refuse`).
/// - The time limit counts from `begin()`, so a session can time out while it waits; it then leaves
///   the line with `readerSessionInvalidationErrorSessionTimeout`.
/// - When the system ends a session (`end`), the session still owns its radio until it reports
///   `released`; only then does the next in line get the radio. A session that ends on its own
///   (first read, the app's `invalidate()`) reports `released` the same way.
/// - Termination (the app moved to the background) ends every session, the running one first, then
///   those waiting, in line order.
///
/// Every input costs the same whatever the length of the line: the line is a FIFO with lazy removal.
struct NFCSessionLineStateMachine {
  typealias SessionID = UInt64

  /// What the line asks, in order (the system's machine routes each to the driver or to a session).
  enum Action: Equatable, Sendable {
    /// The session waits in line; `position` counts from 1 (1: next to get the radio).
    case queued(SessionID, position: Int)
    /// Arms the session's time limit.
    case armTimeout(SessionID, after: Duration)
    /// Drops the session's time limit.
    case disarmTimeout(SessionID)
    /// Hands the radio to the session.
    case activate(SessionID)
    /// Ends the session for `error`; the session reports `released` once it has let go.
    case end(SessionID, NFCReaderError)
  }

  /// Who holds the radio.
  private enum State: Equatable {
    /// Nobody; the line is empty.
    case idle
    /// The session holds the radio (starting or polling); `timed`: its time limit may be armed (it was
    /// begun under a policy with one, or waited in line, where that is not kept), so its release disarms it.
    case running(SessionID, timed: Bool)
  }

  private var state = State.idle
  /// The sessions waiting.
  private var waiting = SessionLine()
  /// Sessions the line ended while they waited, until they are released: with the running one and
  /// those waiting, every session begun and not yet released (usually none).
  private var leaving: Set<SessionID> = []

  /// The session holding the radio.
  var running: SessionID? {
    if case .running(let id, _) = state { return id }
    return nil
  }

  /// How many sessions wait in line.
  var waitingCount: Int { waiting.count }

  /// A session's `begin()`; `unavailable` is `nil` on a radio that can read, else what it says is
  /// missing (no NFC, or a configuration that cannot be used), and the session ends at once with it.
  mutating func begin(_ id: SessionID, policy: NFCSystemPolicy, unavailable: NFCRadioFailure?) -> [Action] {
    var actions: [Action] = []
    begin(id, policy: policy, unavailable: unavailable, into: &actions)
    return actions
  }

  /// `begin(_:policy:unavailable:)`, its actions appended to `out`.
  mutating func begin(
    _ id: SessionID, policy: NFCSystemPolicy, unavailable: NFCRadioFailure?, into out: inout [Action]
  ) {
    guard !isMember(id) else { return }
    if let unavailable {
      out.append(.end(id, NFCSessionStateMachine.error(for: unavailable, operation: "begin")))
      return
    }
    switch state {
    case .idle:
      state = .running(id, timed: policy.sessionTimeout != nil)
      if let limit = policy.sessionTimeout { out.append(.armTimeout(id, after: max(limit, .zero))) }
      out.append(.activate(id))
    case .running(let holder, _):
      guard policy.whenBusy == .queue else {
        out.append(
          .end(
            id,
            NFCReaderError(
              .readerSessionInvalidationErrorSystemIsBusy, "another reader session is running",
              context: ["runningSession": String(holder)])))
        return
      }
      waiting.push(id)
      if let limit = policy.sessionTimeout { out.append(.armTimeout(id, after: max(limit, .zero))) }
      out.append(.queued(id, position: waiting.count))
    }
  }

  /// The session let go of the radio or its place in line: it ended, for any reason.
  mutating func released(_ id: SessionID) -> [Action] {
    var actions: [Action] = []
    released(id, into: &actions)
    return actions
  }

  /// `released(_:)`, its actions appended to `out`.
  mutating func released(_ id: SessionID, into out: inout [Action]) {
    if case .running(id, let timed) = state {
      // Only a time limit that was armed is disarmed.
      if timed { out.append(.disarmTimeout(id)) }
      if let next = next() { out.append(next) }
      return
    }
    guard waiting.remove(id) || (!leaving.isEmpty && leaving.remove(id) != nil) else { return }
    out.append(.disarmTimeout(id))
  }

  /// The session's time limit passed.
  mutating func timeLimitReached(_ id: SessionID) -> [Action] {
    var actions: [Action] = []
    timeLimitReached(id, into: &actions)
    return actions
  }

  /// `timeLimitReached(_:)`, its actions appended to `out`.
  mutating func timeLimitReached(_ id: SessionID, into out: inout [Action]) {
    guard isMember(id) else { return }
    let error = NFCReaderError(
      .readerSessionInvalidationErrorSessionTimeout, "the session reached the system's time limit")
    if running == id { return out.append(.end(id, error)) }
    guard waiting.remove(id) else { return }
    leaving.insert(id)
    var waited = error
    waited.context["while"] = "waiting"
    out.append(.end(id, waited))
  }

  /// The system ended every session of the app.
  mutating func terminated() -> [Action] {
    var actions: [Action] = []
    terminated(into: &actions)
    return actions
  }

  /// `terminated()`, its actions appended to `out`.
  mutating func terminated(into out: inout [Action]) {
    let error = NFCReaderError(
      .readerSessionInvalidationErrorSessionTerminatedUnexpectedly, "the system ended the session")
    if case .running(let id, _) = state { out.append(.end(id, error)) }
    var waited = error
    waited.context["while"] = "waiting"
    for id in waiting.removeAll() {
      leaving.insert(id)
      out.append(.end(id, waited))
    }
  }

  /// Whether the session was begun and not yet released: it holds the radio, waits, or was ended in line.
  private func isMember(_ id: SessionID) -> Bool {
    running == id || waiting.contains(id) || (!leaving.isEmpty && leaving.contains(id))
  }

  /// Hands the radio to the next in line, if any; returns what that asks.
  private mutating func next() -> Action? {
    guard let id = waiting.pop() else {
      state = .idle
      return nil
    }
    state = .running(id, timed: true)  // Whether it was armed is not kept for those who wait.
    return .activate(id)
  }
}
