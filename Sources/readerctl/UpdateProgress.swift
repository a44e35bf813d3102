import ReaderKit

/// One software update install as `readerctl` shows it: how far it is, and how long it should still
/// take, in simulated time.
///
/// The time left starts as the middle of the update's `durationEstimate` (1:30 for
/// `estimate1To2Minutes`) and leans more and more on the pace the reader has kept as the install goes
/// on: the time a whole install takes is taken as `(1 - p) × estimate + p × elapsed / p` at progress
/// `p`, and the time left as `(1 - p)` of that. So it never jumps at the first report, and it ends on
/// the reader's real pace.
struct UpdateProgress: Sendable, Equatable {
  /// What is being installed.
  var update: ReaderSoftwareUpdate
  /// When the install started (`didStartInstallingUpdate`).
  var startedAt: Duration
  /// The latest progress, `0...1`.
  private(set) var progress = 0.0
  /// When it was reported.
  private(set) var reportedAt: Duration

  /// An install of `update` that started at `startedAt`, at 0 %.
  init(update: ReaderSoftwareUpdate, startedAt: Duration) {
    self.update = update
    self.startedAt = startedAt
    reportedAt = startedAt
  }

  /// Notes the progress reported at `time`; out-of-range values are clamped to `0...1`.
  mutating func report(_ progress: Double, at time: Duration) {
    self.progress = progress.isFinite ? min(max(progress, 0), 1) : self.progress
    reportedAt = max(time, startedAt)
  }

  /// The whole progress in percent, rounded down (so 100 % means done).
  var percent: Int { Int((progress * 100).rounded(.down)) }

  /// The simulated time the install should still take.
  var remaining: Duration {
    let range = update.durationEstimate.range
    let estimate = (range.lowerBound + range.upperBound) / 2
    guard progress > 0 else { return estimate }
    guard progress < 1 else { return .zero }
    let observed = (reportedAt - startedAt) / progress
    return (estimate * (1 - progress) + observed * progress) * (1 - progress)
  }

  /// The narrowest bar drawn; below it the bar is left out.
  static let minimumBarWidth = 10
  /// The widest bar drawn.
  static let maximumBarWidth = 30

  /// The progress bar for a line of at most `width` characters:
  /// `  Installing 2.03.00.00  [############..................]   40 %  ETA 0:41`.
  ///
  /// When it does not fit, the word "Installing" goes first, then the version, then the ETA, and the
  /// bar narrows down to `minimumBarWidth`; narrower still, only the percentage is left.
  func line(width: Int) -> String {
    let percentage = String(repeating: " ", count: max(0, 3 - String(percent).count)) + "\(percent) %"
    let eta = "ETA \(Self.clock(remaining))"
    let version = update.deviceSoftwareVersion
    for (head, tail) in [("Installing \(version)", eta), (version, eta), ("", eta), ("", "")] {
      let left = "  " + (head.isEmpty ? "" : head + "  ") + "["
      let right = "]  " + percentage + (tail.isEmpty ? "" : "  " + tail)
      let room = width - left.count - right.count
      guard room >= Self.minimumBarWidth else { continue }
      let bar = min(room, Self.maximumBarWidth)
      let filled = Int((progress * Double(bar)).rounded(.down))
      return left + String(repeating: "#", count: filled) + String(repeating: ".", count: bar - filled) + right
    }
    return ("  " + percentage).fitted(to: width)
  }

  /// The progress as a line of narration: `40 % installed, ETA 0:41`.
  var summary: String { "\(percent) % installed, ETA \(Self.clock(remaining))" }

  /// `0:41`, `12:05`, `1:02:03`: a duration to the nearest second.
  static func clock(_ duration: Duration) -> String {
    let seconds = max(0, Int(duration.inSeconds.rounded()))
    let pad = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
    let hours = seconds / 3600
    return hours > 0
      ? "\(hours):\(pad(seconds / 60 % 60)):\(pad(seconds % 60))" : "\(seconds / 60):\(pad(seconds % 60))"
  }
}
