/// A coarse reading of a reader's battery, derived from its level.
public enum BatteryStatus: String, Sendable, Hashable, Codable, CustomStringConvertible {
  /// The level is unknown (not reported yet).
  case unknown
  /// At or below 5 %: the reader is about to shut down.
  case critical
  /// Above 5 % and up to 20 %.
  case low
  /// Above 20 %.
  case nominal

  /// At or below this level the battery is critical.
  public static let criticalThreshold = 0.05
  /// At or below this level (and above critical) the battery is low.
  public static let lowThreshold = 0.20
  /// Crossing below this level raises the low-battery warning (`readerDidReportLowBatteryWarning`).
  public static let warningThreshold = 0.15

  /// The status for a level in `0...1` (values outside are clamped).
  public init(level: Double) {
    let level = min(max(level, 0), 1)
    if level <= Self.criticalThreshold {
      self = .critical
    } else if level <= Self.lowThreshold {
      self = .low
    } else {
      self = .nominal
    }
  }

  public var description: String { rawValue }
}
