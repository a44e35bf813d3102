/// A coarse estimate of how long installing a whole software update takes (all its components).
///
/// The names are the anchor SDK's; they are also what is persisted and what an update manifest
/// says (`"durationEstimate": "estimate2To5Minutes"`). Estimates are ordered from shortest to longest.
public enum UpdateTimeEstimate: String, Sendable, Hashable, Codable, CaseIterable, Comparable,
  CustomStringConvertible
{
  /// Under a minute.
  case estimateLessThan1Minute
  /// One to two minutes.
  case estimate1To2Minutes
  /// Two to five minutes.
  case estimate2To5Minutes
  /// Five to fifteen minutes.
  case estimate5To15Minutes

  /// The span of install times the estimate stands for: its lower bound included, its upper excluded.
  public var range: Range<Duration> {
    switch self {
    case .estimateLessThan1Minute: .zero ..< .seconds(60)
    case .estimate1To2Minutes: .seconds(60) ..< .seconds(120)
    case .estimate2To5Minutes: .seconds(120) ..< .seconds(300)
    case .estimate5To15Minutes: .seconds(300) ..< .seconds(900)
    }
  }

  /// Text to show a person, e.g. `1-2 minutes`; the same as `ReaderSoftwareUpdate.string(from:)`.
  public var description: String {
    switch self {
    case .estimateLessThan1Minute: "less than 1 minute"
    case .estimate1To2Minutes: "1-2 minutes"
    case .estimate2To5Minutes: "2-5 minutes"
    case .estimate5To15Minutes: "5-15 minutes"
    }
  }

  public static func < (lhs: UpdateTimeEstimate, rhs: UpdateTimeEstimate) -> Bool {
    allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
  }
}
