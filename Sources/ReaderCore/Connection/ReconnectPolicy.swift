/// How hard the terminal tries to win back a reader after an unexpected disconnect.
///
/// Attempt `n` (from 0) opens a link and gives it `attemptTimeout`; when it fails, the next attempt
/// starts after `min(initialDelay * 2^n, maximumDelay)` scaled by a jitter factor drawn uniformly
/// from `1 - jitter ... 1 + jitter` (from the terminal's injected random source). Everything stops at
/// `deadline` after the disconnect, with `bluetoothConnectTimedOut`. While the host's radio is off
/// no attempt is made: the terminal waits for the radio, within the same deadline.
public struct ReconnectPolicy: Sendable, Hashable {
  /// The overall time allowed, counted from the disconnect. 60 seconds by default.
  public var deadline: Duration
  /// The wait before the second attempt. 1 second by default.
  public var initialDelay: Duration
  /// The longest wait between attempts. 8 seconds by default.
  public var maximumDelay: Duration
  /// How long one attempt may take before it is abandoned. 10 seconds by default.
  public var attemptTimeout: Duration
  /// The relative spread of the jitter, in `0...1`. 0.5 by default.
  public var jitter: Double

  /// The default policy: 60 s deadline, 1 s doubling to 8 s, 10 s per attempt, ±50 % jitter.
  public static let `default` = ReconnectPolicy()

  /// Creates a policy.
  public init(
    deadline: Duration = .seconds(60), initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(8),
    attemptTimeout: Duration = .seconds(10), jitter: Double = 0.5
  ) {
    self.deadline = deadline
    self.initialDelay = initialDelay
    self.maximumDelay = maximumDelay
    self.attemptTimeout = attemptTimeout
    self.jitter = min(max(jitter, 0), 1)
  }

  /// The wait after failed attempt `attempt` (0-based), for a unit random draw `unit` in `0..<1`.
  public func delay(afterAttempt attempt: Int, unit: Double) -> Duration {
    let multiplier = 1 << min(max(attempt, 0), 30)
    // Compared before multiplying: a `Duration` product out of range traps instead of wrapping.
    let base = initialDelay > maximumDelay / multiplier ? maximumDelay : initialDelay * multiplier
    // `jitter` is a public var, so the clamp of `init` does not cover every value it can hold.
    let jitter = jitter.isNaN ? 0 : min(max(jitter, 0), 1)
    let factor = 1 - jitter + 2 * jitter * min(max(unit, 0), 1)
    return base * factor
  }
}
