import Foundation

/// How many times slower than an ordinary debug build the code under test runs: `READERKIT_SLOWDOWN`
/// (a whole number, 1 when unset or not a number), which `.ci/tsan.sh` sets for its ThreadSanitizer
/// build, whose every memory access is checked. A test's wall-clock bound on a child (Ctrl-C answered
/// within 500 ms, a failure within a second) is `bound.allowingForSlowdown`: unchanged in ordinary runs.
public enum Slowdown {
  /// The factor, read once.
  public static let factor: Int = {
    guard let text = ProcessInfo.processInfo.environment["READERKIT_SLOWDOWN"], let value = Int(text), value >= 1
    else { return 1 }
    return value
  }()
}

extension Duration {
  /// This bound, multiplied by `Slowdown.factor`.
  public var allowingForSlowdown: Duration { self * Slowdown.factor }
}
