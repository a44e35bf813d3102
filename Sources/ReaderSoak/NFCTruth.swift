import NFCKit
import ReaderSimulator

/// The NFC side's rules on one station, held against the simulated NFC world (`SimulatedNFCRadio`):
/// what reaches a session's delegate, and when, against the radio's rounds and the tags in its field.
///
/// Checked at every delivery to a delegate (and every tag operation's completion), and at the end of
/// every instant: the radio never polls for a session that has ended, and no session outlives the
/// system's time limit.
final class NFCTruth: @unchecked Sendable {
  // Confined to the thread that drives the clock.

  /// A session as the checks know it: sessions are numbered per reader system, and each launch of the
  /// app has its own system, so a session is named by both.
  struct Key: Hashable, CustomStringConvertible {
    var generation: Int
    var session: UInt64
    var description: String { "session \(generation).\(session)" }
  }

  /// A delegate call.
  enum Call: String {
    case didBecomeActive, didDetectNDEFs, didDetectTags, didFailToReadNDEF, didInvalidate
  }

  private struct Record {
    var begunAt: Duration
    /// The system's time limit when it was begun, which is the one it gets.
    var limit: Duration?
    var readWrite: Bool
    var invalidated = false
    var calls = 0
  }

  private unowned let station: SoakStation
  private let violations: SoakViolations
  private var sessions: [Key: Record] = [:]
  /// Sessions not invalidated yet.
  private var open: Set<Key> = []
  /// The launch whose reader system drives the radio.
  private var generation = 0
  private(set) var counts: [String: Int] = [:]

  init(station: SoakStation, violations: SoakViolations) {
    self.station = station
    self.violations = violations
  }

  private var radio: SimulatedNFCRadio { station.nfcRadio }
  private var now: Duration { station.clock.elapsed }

  private func fail(_ invariant: SoakViolation.Invariant, _ message: String) {
    violations.record(now, station.index, invariant, message)
  }

  /// A launch of the app created its reader system.
  func launched(generation: Int) { self.generation = generation }

  /// The last change of the system's time limit: when, and the limit before it.
  private var lastLimitChange: (at: Duration, previous: Duration?)?

  /// The app is about to begin a session.
  func begun(_ key: Key, readWrite: Bool) {
    var limit = radio.policy.sessionTimeout
    // `begin()` reaches the system later in the same instant; a limit changed in that instant may
    // apply either way, so the session may have the longer of the two.
    if let change = lastLimitChange, change.at == now { limit = Self.longer(limit, change.previous) }
    sessions[key] = Record(begunAt: now, limit: limit, readWrite: readWrite)
    open.insert(key)
    counts[readWrite ? "readWriteSessions" : "readOnlySessions", default: 0] += 1
    if let limit { station.probe(at: now + limit + .milliseconds(1)) }
  }

  /// The system's time limit changed from `previous`: sessions begun in this instant may have either.
  func limitChanged(from previous: Duration?) {
    lastLimitChange = (now, previous)
    let limit = radio.policy.sessionTimeout
    for key in open {
      guard var record = sessions[key], record.begunAt == now else { continue }
      record.limit = Self.longer(record.limit, limit)
      sessions[key] = record
      if let limit = record.limit { station.probe(at: now + limit + .milliseconds(1)) }
    }
  }

  /// The longer of two limits; `nil` is no limit.
  private static func longer(_ a: Duration?, _ b: Duration?) -> Duration? {
    guard let a, let b else { return nil }
    return max(a, b)
  }

  /// Whether the session has heard its invalidation.
  func isInvalidated(_ key: Key) -> Bool { sessions[key]?.invalidated ?? true }

  /// A call reached a session's delegate.
  func delivered(_ key: Key, _ call: Call, messages: [NFCNDEFMessage] = []) {
    counts[call.rawValue, default: 0] += 1
    guard var record = sessions[key] else { return fail(.nfcDelivery, "\(call) reached \(key), never begun") }
    defer { sessions[key] = record }
    record.calls += 1
    if record.invalidated {
      return fail(.nfcDelivery, "\(call) reached \(key) after its didInvalidateWithError")
    }
    switch call {
    case .didInvalidate:
      record.invalidated = true
      open.remove(key)
    case .didBecomeActive:
      if !polls(for: key) { fail(.nfcRound, "\(key) became active while the radio polls for \(round)") }
    case .didDetectNDEFs, .didDetectTags, .didFailToReadNDEF:
      if !polls(for: key) { fail(.nfcRound, "\(call) reached \(key) while the radio polls for \(round)") }
      if call == .didDetectTags, !record.readWrite { fail(.nfcRound, "tags reached the read-only \(key)") }
      if call == .didDetectNDEFs, record.readWrite { fail(.nfcRound, "messages reached the read-write \(key)") }
      checkMessages(messages, key, "didDetectNDEFs")
    }
  }

  /// A tag operation's completion ran; `message` is what a read returned.
  func completed(_ key: Key, operation: String, succeeded: Bool, message: NFCNDEFMessage? = nil) {
    counts["completed.\(operation)", default: 0] += 1
    if succeeded, isInvalidated(key) { fail(.nfcDelivery, "\(operation) succeeded on \(key) after its invalidation") }
    if let message { checkMessages([message], key, operation) }
  }

  private var round: String {
    guard let round = radio.currentRound else { return "no session" }
    return "session \(generation).\(round.session)\(radio.isPolling ? "" : " (starting)")"
  }

  private func polls(for key: Key) -> Bool {
    key.generation == generation && radio.isPolling && radio.currentRound?.session == key.session
  }

  /// Every message must be the content of a tag in the field now.
  private func checkMessages(_ messages: [NFCNDEFMessage], _ key: Key, _ what: String) {
    guard !messages.isEmpty else { return }
    let field = radio.tagsInField.compactMap { radio.tag($0)?.ndefBytes }.compactMap { try? NDEFMessage(decoding: $0) }
      .map(NFCNDEFMessage.init)
    for message in messages where !field.contains(message) {
      fail(.nfcMessage, "\(what) gave \(key) a message no tag in the field holds (\(radio.tagsInField))")
    }
  }

  /// The end of an instant: the radio polls only for a session still running, and every session ends
  /// within the system's time limit.
  func instant(_ now: Duration) {
    if let round = radio.currentRound {
      let key = Key(generation: generation, session: round.session)
      violations.episode(
        "round", broken: sessions[key]?.invalidated == true, now, station.index, .nfcRound,
        "the radio polls for \(key), which has ended")
    }
    guard !open.isEmpty else { return }
    // In session order, so that a run reports the same violations in the same order every time.
    for key in open.sorted(by: { ($0.generation, $0.session) < ($1.generation, $1.session) }) {
      guard let record = sessions[key], let limit = record.limit, now > record.begunAt + limit else { continue }
      fail(.nfcTimeLimit, "\(key), begun at \(record.begunAt.soakText), runs past its \(limit.soakText) limit")
      open.remove(key)
    }
  }

  /// Which side state the sessions are in.
  var state: SoakState {
    guard open.count > 0 else { return .nfcIdle }
    return open.count > 1 ? .nfcQueued : .nfcActive
  }
}
