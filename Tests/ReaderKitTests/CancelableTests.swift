import ReaderCore
import ReaderKit
import ReaderSimulator
import Testing

/// An ordered record of who finished when, across completions.
private final class Timeline: Sendable {
  private let entries = Locked<[String]>([])
  func note(_ entry: String) { entries.withLock { $0.append(entry) } }
  var all: [String] { entries.withLock { $0 } }
}

@Suite(.timeLimit(.minutes(2))) struct CancelableTests {
  @Test func cancelCompletesTheOperationWithCanceledBeforeTheCancelCompletionRuns() throws {
    let h = Harness()
    let timeline = Timeline()
    let discovery = h.terminal.discoverReaders(try Harness.scan, delegate: DiscoveryRecorder(clock: h.clock)) { error in
      timeline.note("discovery \(error?.code.description ?? "ok")")
    }
    h.clock.advance(by: .seconds(2))
    #expect(!discovery.completed)

    // Stripe's form: `nil` when the operation was cancelled.
    discovery.cancel { error in timeline.note("cancel 1 \(error.map { "\($0)" } ?? "nil")") }
    discovery.cancel { error in timeline.note("cancel 2 \(error.map { "\($0)" } ?? "nil")") }
    #expect(timeline.all.isEmpty)  // Nothing happens off the scheduler.
    h.clock.runUntilIdle()
    #expect(timeline.all == ["discovery canceled", "cancel 1 nil", "cancel 2 nil"])
    #expect(discovery.completed)
    #expect(discovery.isCompleted)

    // A third cancel, after the fact, is answered at once and changes nothing: still cancelled.
    discovery.cancel { error in timeline.note("cancel 3 \(error.map { "\($0)" } ?? "nil")") }
    h.clock.advance(by: .seconds(10))
    #expect(timeline.all == ["discovery canceled", "cancel 1 nil", "cancel 2 nil", "cancel 3 nil"])
    #expect(h.terminal.connectionStatus == .notConnected)
  }

  @Test func cancellingAFinishedOperationFailsWithCancelFailedAlreadyCompletedAtOnce() throws {
    let h = Harness()
    let done = Outcome<ReaderError?>()
    let discovery = h.terminal.discoverReaders(
      try h.scan(timeout: 3), delegate: DiscoveryRecorder(clock: h.clock), completion: done.record)
    h.clock.advance(by: .seconds(3))
    #expect(done.value == .some(nil))
    #expect(discovery.completed)

    // The sample of Stripe's guide, as written for Stripe's SDK.
    let answer = Outcome<String>()
    discovery.cancel { error in
      if let error = error {
        answer.record("failed: \((error as? ReaderError)?.code.description ?? "\(error)")")
      } else {
        answer.record("canceled")
      }
    }
    #expect(answer.all == ["failed: cancelFailedAlreadyCompleted"])  // At once: there is nothing to wait for.
    h.clock.runUntilIdle()
    #expect(done.count == 1)
  }

  @Test func aCancelWaitingForAnOperationThatEndsOnItsOwnFailsWithCancelFailedAlreadyCompletedAfterIt() throws {
    let h = Harness()
    guard try h.connect(Fixture.m2) != nil else { return }
    let disconnect = Outcome<ReaderError?>()
    let handle = h.terminal.disconnectReader(completion: disconnect.record)
    h.clock.runUntilIdle()  // Sent to the reader: it runs to the end.
    let answer = Outcome<ReaderError.Code?>()
    handle.cancel { error in answer.record((error as? ReaderError)?.code) }
    h.clock.runUntilIdle()
    #expect(answer.count == 0, "the cancel's completion waits until the disconnect has finished")
    h.clock.advance(by: .seconds(1))
    #expect(disconnect.value == .some(nil))
    #expect(answer.all == [.cancelFailedAlreadyCompleted])
    #expect(handle.completed)
  }

  @Test func discoveryRestartedFromTheCancelCompletionStartsAtOnce() throws {
    let h = Harness()
    let terminal = h.terminal
    let first = DiscoveryRecorder(clock: h.clock)
    let second = DiscoveryRecorder(clock: h.clock)
    let firstDone = Outcome<ReaderError?>()
    let secondDone = Outcome<ReaderError?>()
    let restarted = Outcome<Cancelable>()
    let scan = try Harness.scan
    let discovery = terminal.discoverReaders(scan, delegate: first, completion: firstDone.record)
    h.clock.advance(by: .seconds(2))
    let restartTime = h.clock.elapsed

    discovery.cancel { _ in
      restarted.record(terminal.discoverReaders(scan, delegate: second, completion: secondDone.record))
    }
    h.clock.runUntilIdle()
    #expect(firstDone.value??.code == .canceled)
    #expect(restarted.count == 1)
    #expect(h.terminal.connectionStatus == .discovering)
    #expect(!h.log.names.contains("didQueueCommand"))
    #expect(h.clock.elapsed == restartTime)

    h.clock.advance(by: .seconds(2))
    #expect(second.latestSerials == [Fixture.chipper, Fixture.m2, Fixture.wisePad])
    #expect(secondDone.count == 0)
    restarted.value?.cancel()
    h.clock.runUntilIdle()
    #expect(secondDone.value??.code == .canceled)
  }

  @Test func secondDiscoveryWaitsForTheFirstThenRuns() throws {
    let h = Harness()
    let first = Outcome<ReaderError?>()
    let secondDelegate = DiscoveryRecorder(clock: h.clock)
    let second = Outcome<ReaderError?>()
    h.terminal.discoverReaders(
      try h.scan(timeout: 5), delegate: DiscoveryRecorder(clock: h.clock), completion: first.record)
    h.terminal.discoverReaders(try Harness.scan, delegate: secondDelegate, completion: second.record)
    h.clock.runUntilIdle()
    #expect(h.log.kinds.contains(.didQueueCommand(command: "discoverReaders", position: 1)))

    h.clock.advance(by: .seconds(5) - .milliseconds(1))
    #expect(secondDelegate.updates.isEmpty)
    #expect(first.count == 0)

    h.clock.advance(by: .milliseconds(1))
    #expect(first.value == .some(nil))
    h.clock.advance(by: .seconds(2))
    #expect(!secondDelegate.updates.isEmpty)
    #expect(secondDelegate.times.allSatisfy { $0 > .seconds(5) })
    #expect(second.count == 0)
  }

  @Test func queuedCommandCanBeCancelledWhileItWaits() throws {
    let h = Harness()
    let first = Outcome<ReaderError?>()
    let second = Outcome<ReaderError?>()
    let answer = Outcome<CancelResult>()
    let secondDelegate = DiscoveryRecorder(clock: h.clock)
    let running = h.terminal.discoverReaders(
      try Harness.scan, delegate: DiscoveryRecorder(clock: h.clock), completion: first.record)
    let waiting = h.terminal.discoverReaders(try Harness.scan, delegate: secondDelegate, completion: second.record)
    h.clock.advance(by: .seconds(1))

    waiting.cancelAndReport(answer.record)
    h.clock.runUntilIdle()
    #expect(second.value??.code == .canceled)
    #expect(answer.all == [.canceled])
    #expect(first.count == 0)
    #expect(h.terminal.connectionStatus == .discovering)

    // The running one goes on; when it ends, the cancelled one does not start.
    running.cancel()
    h.clock.advance(by: .seconds(5))
    #expect(first.value??.code == .canceled)
    #expect(secondDelegate.updates.isEmpty)
    #expect(h.terminal.connectionStatus == .notConnected)
  }

  @Test func asyncCancelWaitsUntilTheOperationStopped() async throws {
    let h = Harness()
    let done = Outcome<ReaderError?>()
    let discovery = h.terminal.discoverReaders(
      try Harness.scan, delegate: DiscoveryRecorder(clock: h.clock), completion: done.record)
    h.clock.advance(by: .seconds(1))
    let canceller = Task { await discovery.cancel() }
    var result: CancelResult?
    for _ in 0..<100_000 where done.count == 0 {
      await Task.yield()
      h.clock.runUntilIdle()
    }
    result = await canceller.value
    #expect(result == .canceled)
    #expect(done.value??.code == .canceled)
    #expect(await discovery.cancel() == .canceled)
  }
}
