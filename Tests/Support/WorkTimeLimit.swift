import Foundation
import Testing

/// A time limit on each test's own work: like `.timeLimit`, the test fails with one issue once it has
/// run longer than `limit` (and its task is cancelled), but the time it spends waiting for a turn at a
/// `ChildProcessGate` does not count. A test that starts children waits for a turn as long as the other
/// tests' children hold the gate, which depends on the load, not on the test; the child's own run is
/// bounded by the helper that starts it (it is killed at its limit).
///
/// Every wait for a turn ends: each permit is held by a child that is killed at its own limit.
public struct WorkTimeLimit: TestTrait, SuiteTrait, TestScoping {
  /// The work a test may do.
  public let limit: Duration

  public var isRecursive: Bool { true }

  public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
    // Around each test case; a suite's own scope only passes the trait down.
    testCase == nil ? nil : self
  }

  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    try await withWorkTimeLimit(limit, function) { waited in
      Issue.record(
        "Time limit was exceeded: \(limit) of work (not counting \(waited) waiting for a turn to start a child)")
    }
  }
}

extension Trait where Self == WorkTimeLimit {
  /// A time limit on each test's own work, not counting its waits for a turn at a `ChildProcessGate`.
  public static func workTimeLimit(_ limit: Duration) -> Self { WorkTimeLimit(limit: limit) }
}

/// Runs `body` with a watchdog: once `body` has worked for `limit` from the moment the watchdog first
/// runs (its waits for turns at a `ChildProcessGate`, counted on the `TurnWaits` bound to it, left
/// out), `exceeded` is called with the time it waited and `body`'s task is cancelled; then this waits
/// for `body` to end (a `body` that ignores cancellation ends when its own bounds end it). Throws what
/// `body` throws, except the `CancellationError` that follows the limit.
public func withWorkTimeLimit(
  _ limit: Duration, _ body: @Sendable () async throws -> Void,
  exceeded: @escaping @Sendable (_ waited: Duration) -> Void
) async throws {
  enum Ended: Sendable { case body, exceeded, watchCancelled }
  let waits = TurnWaits()
  try await TurnWaits.$current.withValue(waits) {
    try await withoutActuallyEscaping(body) { body in
      try await withThrowingTaskGroup(of: Ended.self) { group in
        group.addTask {
          try await body()
          return .body
        }
        group.addTask {
          // The count starts here, when the watchdog first runs, as Swift Testing's own limit does.
          waits.restart()
          while true {
            let remaining = limit - waits.worked()
            if remaining <= .zero {
              exceeded(waits.waited())
              return .exceeded
            }
            do { try await Task.sleep(for: remaining) } catch { return .watchCancelled }
          }
        }
        switch try await group.next() {
        case .body?:
          group.cancelAll()
          _ = try await group.next()
        case .exceeded?:
          group.cancelAll()
          do { _ = try await group.next() } catch is CancellationError {}
        case .watchCancelled?, nil:
          // The test itself was cancelled: its body ends as it would without the limit.
          _ = try await group.next()
        }
      }
    }
  }
}
