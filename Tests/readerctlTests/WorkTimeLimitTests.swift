import Dispatch
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `workTimeLimit` (TestSupport), the limit of the suites that start children: the wait for a turn at
/// a `ChildProcessGate` is counted as waiting, not work; a wait for a permit taken another way is work;
/// the count starts when it is restarted; a test past its limit is reported once and cancelled.
///
/// Nothing here depends on how soon a task gets a thread of the cooperative pool (a parallel run of
/// every suite keeps it busy for seconds): the other holder of the gate lets go only once the test's
/// thread is waiting for it.
@Suite(.timeLimit(.minutes(1))) struct WorkTimeLimitTests {
  /// The limits it saw exceeded, with the time waited for turns each time.
  private final class Reports: @unchecked Sendable {
    private let lock = NSLock()
    private var waited: [Duration] = []
    func append(_ duration: Duration) { lock.withLock { waited.append(duration) } }
    var all: [Duration] { lock.withLock { waited } }
  }

  /// A gate of one permit that another thread holds (as another test's child would) until `waits`
  /// shows a wait in progress, or `ready()` holds (10 s at most), and `hold` seconds more; returns once
  /// that thread holds it.
  private func gateHeld(
    untilWaiting waits: TurnWaits?, or ready: @escaping @Sendable () -> Bool = { false }, hold: Double
  )
    -> ChildProcessGate
  {
    let gate = ChildProcessGate(width: 1)
    let holding = DispatchSemaphore(value: 0)
    Thread {
      gate.withPermit {
        holding.signal()
        // Bounded, so that a wait that is never marked fails the test instead of hanging it.
        let deadline = ContinuousClock.now + .seconds(10)
        while waits?.isWaiting != true, !ready(), ContinuousClock.now < deadline { usleep(1_000) }
        usleep(useconds_t(hold * 1_000_000))
      }
    }.start()
    holding.wait()
    return gate
  }

  @Test(.workTimeLimit(.seconds(60))) func theWaitForATurnCountsAsWaitingNotWork() async throws {
    let waits = try #require(TurnWaits.current, "the trait binds the test's waits")
    let started = ContinuousClock.now
    let gate = gateHeld(untilWaiting: waits, hold: 0.5)
    try await gate.withTurn {}
    let now = ContinuousClock.now
    #expect(waits.waited(at: now) >= .milliseconds(500), "waited \(waits.waited(at: now))")
    #expect(waits.worked(at: now) <= now - started - .milliseconds(500), "worked \(waits.worked(at: now))")
    #expect(!waits.isWaiting)
  }

  @Test(.workTimeLimit(.seconds(60))) func aPermitTakenWithoutWithTurnIsWork() async throws {
    // The control of the test above: the same wait, not marked as a wait for a turn.
    let waits = try #require(TurnWaits.current)
    let asked = Reports()
    let gate = gateHeld(untilWaiting: nil, or: { !asked.all.isEmpty }, hold: 0.5)
    try await offPool {
      asked.append(.zero)
      gate.withPermit {}
    }
    #expect(waits.waited() == .zero)
  }

  @Test func theCountStartsAgainAtARestartAndLeavesTheWaitsBeforeOut() throws {
    let start = ContinuousClock.now
    let waits = TurnWaits(started: start)
    #expect(waits.worked(at: start + .seconds(3)) == .seconds(3))
    waits.restart(at: start + .seconds(2))
    #expect(waits.worked(at: start + .seconds(3)) == .seconds(1))
    #expect(waits.waited(at: start + .seconds(3)) == .zero)
  }

  @Test func aTestPastItsLimitIsReportedOnceAndCancelled() async throws {
    let reports = Reports()
    let started = ContinuousClock.now
    try await withWorkTimeLimit(.milliseconds(200)) {
      // Never ends by itself: it waits until its task is cancelled.
      let (stream, continuation) = AsyncStream<Never>.makeStream()
      for await _ in stream {}
      continuation.finish()
      #expect(Task.isCancelled)
    } exceeded: {
      reports.append($0)
    }
    #expect(reports.all == [.zero])
    #expect(ContinuousClock.now - started >= .milliseconds(200))
  }

  @Test func aTestThatEndsWithinItsLimitIsNotReported() async throws {
    let reports = Reports()
    try await withWorkTimeLimit(.seconds(60)) {
    } exceeded: {
      reports.append($0)
    }
    #expect(reports.all.isEmpty)
  }
}
