import Dispatch
import Foundation
import TestSupport
import Testing

/// `workTimeLimit` (TestSupport), the limit of the suites that start children: the wait for a turn at
/// a `ChildProcessGate` does not count, the work before and after it does, and a test past its limit is
/// reported once and cancelled.
///
/// The limits are seconds, not milliseconds: the work a test does includes the time its tasks wait for
/// a thread of the cooperative pool, which a parallel run keeps busy. They grow with `Slowdown.factor`.
@Suite(.timeLimit(.minutes(1))) struct WorkTimeLimitTests {
  /// One second, times `Slowdown.factor`.
  private let second = Double(Slowdown.factor)
  /// The limits it saw exceeded, with the time waited for turns each time.
  private final class Reports: @unchecked Sendable {
    private let lock = NSLock()
    private var waited: [Duration] = []
    func append(_ duration: Duration) { lock.withLock { waited.append(duration) } }
    var all: [Duration] { lock.withLock { waited } }
  }

  /// Resumes after `seconds` on a dispatch timer: time the test spends working.
  private func work(for seconds: Double) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { continuation.resume() }
    }
  }

  /// A gate of one permit that another thread holds for `seconds` (as another test's child would);
  /// returns once that thread holds it.
  private func gateHeld(for seconds: Double) -> ChildProcessGate {
    let gate = ChildProcessGate(width: 1)
    let holding = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    Thread {
      gate.withPermit {
        holding.signal()
        release.wait()
      }
    }.start()
    holding.wait()
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { release.signal() }
    return gate
  }

  @Test(.workTimeLimit(.seconds(60))) func theTraitGivesEachTestItsOwnCountOfWaits() {
    #expect(TurnWaits.current != nil)
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

  @Test func theWaitForATurnDoesNotCount() async throws {
    let reports = Reports()
    let gate = gateHeld(for: 6 * second)
    let started = ContinuousClock.now
    try await withWorkTimeLimit(.seconds(3 * second)) {
      try await gate.withTurn {}
    } exceeded: {
      reports.append($0)
    }
    #expect(ContinuousClock.now - started >= .seconds(6 * second), "the turn came before the other holder gave it back")
    #expect(reports.all.isEmpty, "the wait for the turn counted as work")
  }

  @Test func aWaitForAPermitTakenWithoutTheTestsWaitsCounts() async throws {
    // The control of the test above: the same wait, not marked as a wait for a turn, is work.
    let reports = Reports()
    let gate = gateHeld(for: 6 * second)
    try await withWorkTimeLimit(.seconds(3 * second)) {
      try await offPool { gate.withPermit {} }
    } exceeded: {
      reports.append($0)
    }
    #expect(reports.all.count == 1 && reports.all.first == .zero)
  }

  @Test func theWorkBeforeAndAfterAWaitCounts() async throws {
    let reports = Reports()
    let gate = gateHeld(for: 6 * second)
    try await withWorkTimeLimit(.seconds(3 * second)) {
      await work(for: 0.5 * second)
      try await gate.withTurn {}
      await work(for: 3.5 * second)
    } exceeded: {
      reports.append($0)
    }
    // Exceeded 2.5 s into the work after the wait, having waited about 5.5 s (6 s less the work before).
    #expect(reports.all.count == 1)
    #expect(
      reports.all.first.map { $0 >= .seconds(3 * second) && $0 < .seconds(6 * second) } == true, "waited \(reports.all)"
    )
  }
}
