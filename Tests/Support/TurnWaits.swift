import Foundation

/// The time one test has spent waiting for a turn at a `ChildProcessGate`, which `WorkTimeLimit` does
/// not count: the test that waits is not working, and how long it waits depends on how many other
/// tests want a child at the same time, not on the test.
///
/// `WorkTimeLimit` binds one to `current` for the test it limits; `ChildProcessGate.withTurn` reads it
/// on the test's task and marks its wait on it. Several waits of one test at once (children started
/// in a task group) count once: the time during which at least one of them waits.
public final class TurnWaits: @unchecked Sendable {
  /// The waits of the test running on this task, when a `WorkTimeLimit` limits it.
  @TaskLocal public static var current: TurnWaits?

  // An `NSLock` rather than `Mutex`: ThreadSanitizer sees it (it does not see `Mutex` on Linux).
  private let lock = NSLock()
  private var started: ContinuousClock.Instant
  private var waiting = 0
  private var waitingSince: ContinuousClock.Instant
  private var waitedBefore = Duration.zero

  /// Counts from `started`.
  public init(started: ContinuousClock.Instant = .now) {
    self.started = started
    waitingSince = started
  }

  /// Counts from `now` again: what was worked or waited before does not count. `withWorkTimeLimit`
  /// calls it when its watchdog first runs, as Swift Testing's own limit counts from the moment its
  /// timer first runs: in a run of many tests, a test's tasks may wait long for a thread of the
  /// cooperative pool before they run at all.
  public func restart(at now: ContinuousClock.Instant = .now) {
    lock.withLock {
      started = now
      waitedBefore = .zero
      if waiting > 0 { waitingSince = now }
    }
  }

  /// Whether a wait for a turn is in progress.
  public var isWaiting: Bool { lock.withLock { waiting > 0 } }

  /// Runs `wait` (which blocks until the turn comes) and counts the time it takes as waiting.
  public func during<Value>(_ wait: () throws -> Value) rethrows -> Value {
    lock.withLock {
      if waiting == 0 { waitingSince = max(.now, started) }
      waiting += 1
    }
    defer {
      lock.withLock {
        waiting -= 1
        if waiting == 0 { waitedBefore += .now - waitingSince }
      }
    }
    return try wait()
  }

  /// The time spent waiting for turns until `now`, the wait in progress included.
  public func waited(at now: ContinuousClock.Instant = .now) -> Duration {
    lock.withLock { waitedBefore + (waiting > 0 ? now - waitingSince : .zero) }
  }

  /// The time the test has worked until `now`: since the count started, less its waits for turns.
  public func worked(at now: ContinuousClock.Instant = .now) -> Duration {
    lock.withLock { now - started - waitedBefore - (waiting > 0 ? now - waitingSince : .zero) }
  }
}
