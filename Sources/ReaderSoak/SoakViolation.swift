/// A broken invariant: when, on which station, which rule, and what the world and the terminal said.
public struct SoakViolation: Sendable, Hashable, CustomStringConvertible {
  /// The rules the soak holds the library to.
  public enum Invariant: String, Sendable, Hashable, CaseIterable {
    /// The terminal says connected only while the world's link to that reader is up.
    case link
    /// A link, or a connect request, the world holds for the app belongs to a connection the terminal
    /// knows of.
    case orphanLink
    /// A reader lost unexpectedly and reachable long enough within the reconnect deadline is won back.
    case reconnect
    /// At launch, the saved reader, reachable long enough within the search, is connected.
    case launch
    /// Every software version the terminal reports is the one the world's reader runs.
    case version
    /// Progress stays in 0...1, never goes back, reaches 1 on success, never runs ahead of the reader.
    case progress
    /// Exactly one start and one finish per install, and every install finishes.
    case install
    /// The saved reader is always readable, and is the last one saved (or the one being saved).
    case store
    /// Nothing reaches an NFC session's delegate after its invalidation; it is invalidated once.
    case nfcDelivery
    /// Detections come only while the radio polls for the session; the radio never polls for an ended one.
    case nfcRound
    /// A message delivered is the message of a tag in the field.
    case nfcMessage
    /// No session outlives the system's time limit.
    case nfcTimeLimit
    /// Every command's completion runs exactly once.
    case completion
    /// The run went past its wall-clock budget.
    case wallTime
    /// Simulated time moves: the clock driven to the next deadline reaches it.
    case clock
  }

  /// Simulated time since the start of the run.
  public var time: Duration
  /// The station, or -1 for the run as a whole.
  public var station: Int
  /// The rule broken.
  public var invariant: Invariant
  /// What was seen.
  public var message: String

  public init(time: Duration, station: Int, invariant: Invariant, message: String) {
    self.time = time
    self.station = station
    self.invariant = invariant
    self.message = message
  }

  /// `time s<station> [invariant] message`.
  public var description: String { "\(time.soakText) s\(station) [\(invariant.rawValue)] \(message)" }
}

/// Collects violations, one per episode: a condition that holds over several instants is reported
/// when it starts, not at every instant.
final class SoakViolations: @unchecked Sendable {
  // Confined to the thread that drives the clock.
  private(set) var all: [SoakViolation] = []
  private var open: Set<Episode> = []
  /// At most this many are kept (the count goes on).
  let limit = 200
  private(set) var count = 0

  func record(_ time: Duration, _ station: Int, _ invariant: SoakViolation.Invariant, _ message: String) {
    count += 1
    if all.count < limit {
      all.append(SoakViolation(time: time, station: station, invariant: invariant, message: message))
    }
  }

  /// What a condition is about: one rule, on one station, for one reader or session.
  private struct Episode: Hashable {
    var station: Int
    var invariant: SoakViolation.Invariant
    var subject: String
  }

  /// Records a violation when `broken` becomes true for `subject`; again only after it was false once.
  func episode(
    _ subject: String, broken: Bool, _ time: Duration, _ station: Int, _ invariant: SoakViolation.Invariant,
    _ message: @autoclosure () -> String
  ) {
    if broken {
      if open.insert(Episode(station: station, invariant: invariant, subject: subject)).inserted {
        record(time, station, invariant, message())
      }
    } else if !open.isEmpty {
      open.remove(Episode(station: station, invariant: invariant, subject: subject))
    }
  }
}
