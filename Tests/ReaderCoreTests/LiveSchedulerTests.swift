import Dispatch
import Foundation
import Testing

@testable import ReaderCore

/// Collects the order work ran in and resumes a waiter once `expected` items have run, or with what
/// ran so far when its task is cancelled (a time limit): a scheduler that never runs the work fails
/// the test instead of leaving it waiting.
private final class RunLog: Sendable {
  private let state = Locked<(order: [Int], waiter: CheckedContinuation<[Int], Never>?, cancelled: Bool)>(
    ([], nil, false))
  let expected: Int

  init(expected: Int) { self.expected = expected }

  func ran(_ item: Int) {
    let done = state.withLock { state -> (CheckedContinuation<[Int], Never>, [Int])? in
      state.order.append(item)
      guard state.order.count == expected, let waiter = state.waiter else { return nil }
      state.waiter = nil
      return (waiter, state.order)
    }
    if let (waiter, order) = done { waiter.resume(returning: order) }
  }

  func wait() async -> [Int] {
    await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let order = state.withLock { state -> [Int]? in
          if state.order.count == expected || state.cancelled { return state.order }
          state.waiter = continuation
          return nil
        }
        if let order { continuation.resume(returning: order) }
      }
    } onCancel: {
      let waiting = state.withLock { state -> (CheckedContinuation<[Int], Never>, [Int])? in
        state.cancelled = true
        guard let waiter = state.waiter else { return nil }
        state.waiter = nil
        return (waiter, state.order)
      }
      if let (waiter, order) = waiting { waiter.resume(returning: order) }
    }
  }
}

@Suite(.timeLimit(.minutes(1))) struct LiveSchedulerTests {
  @Test func workDueAtTheSameInstantRunsInSubmissionOrder() async {
    // The live scheduler measures with a virtual clock here, so every item is due at exactly the
    // same instant and all their waits end together; whichever wait ends first must run them all
    // in the order they were submitted.
    let time = VirtualClock()
    let scheduler = LiveScheduler(clock: time)
    let log = RunLog(expected: 400)
    for item in 0..<400 {
      if item.isMultiple(of: 4) {
        scheduler.schedule(after: .seconds(2)) { log.ran(item) }
      } else {
        scheduler.schedule(after: .seconds(1)) { log.ran(item) }
      }
    }
    for _ in 0..<50 { await Task.yield() }
    time.advance(by: .seconds(3))
    let order = await log.wait()
    let early = (0..<400).filter { !$0.isMultiple(of: 4) }
    let late = (0..<400).filter { $0.isMultiple(of: 4) }
    #expect(order == early + late)
  }

  @Test func cancelledWorkDoesNotRun() async {
    let time = VirtualClock()
    let scheduler = LiveScheduler(clock: time)
    let log = RunLog(expected: 2)
    scheduler.schedule(after: .seconds(1)) { log.ran(0) }
    let dropped = scheduler.schedule(after: .seconds(1)) { log.ran(1) }
    scheduler.schedule(after: .seconds(1)) { log.ran(2) }
    scheduler.cancel(dropped)
    time.advance(by: .seconds(1))
    #expect(await log.wait() == [0, 2])
  }

  @Test func isCurrentHoldsInsideItsWorkOnly() async {
    let scheduler = LiveScheduler()
    let other = LiveScheduler()
    #expect(!scheduler.isCurrent)
    let seen = await withCheckedContinuation { (continuation: CheckedContinuation<(Bool, Bool), Never>) in
      scheduler.execute { continuation.resume(returning: (scheduler.isCurrent, other.isCurrent)) }
    }
    #expect(seen == (true, false))
  }

  @Test func aTimerFiresOnTimeWhileEveryThreadOfTheCooperativePoolIsHeld() async {
    // Every pool thread blocks until the timer lets it go, or gives up after ten seconds: a timer woken
    // through the pool could not fire while they block, and every wait would end by giving up. (How
    // long it all takes says nothing: in a full run the holders wait their turn behind other tests.)
    let scheduler = LiveScheduler()
    let holders = ProcessInfo.processInfo.activeProcessorCount + 2
    let release = DispatchSemaphore(value: 0)
    scheduler.schedule(after: .milliseconds(50)) { for _ in 0..<holders { release.signal() } }
    let released = await withTaskGroup(of: Bool.self) { group in
      for _ in 0..<holders { group.addTask { release.wait(timeout: .now() + .seconds(10)) == .success } }
      return await group.reduce(into: 0) { count, released in count += released ? 1 : 0 }
    }
    #expect(released == holders, "every wait ended because the timer fired, none by giving up")
  }
}

@Suite struct SchedulerConfinementTests {
  @Test func aVirtualClockIsCurrentOnlyWhileItRunsWork() {
    let clock = VirtualClock()
    let inside = Locked<[Bool]>([])
    clock.execute { inside.withLock { $0.append(clock.isCurrent) } }
    #expect(!clock.isCurrent)
    clock.runUntilIdle()
    #expect(inside.withLock { $0 } == [true])
    #expect(!clock.isCurrent)
  }

  @Test func aVirtualClockDeliversBlockingWorkAtTheSameInstantAfterWorkAlreadyDue() {
    let clock = VirtualClock()
    let order = Locked<[String]>([])
    clock.schedule(after: .seconds(1)) {
      clock.execute { order.withLock { $0.append("due first") } }
      clock.performBlocking({ "blocking result" }) { result in
        order.withLock { $0.append("\(result) at \(clock.elapsed)") }
      }
    }
    clock.advance(by: .seconds(1))
    #expect(order.withLock { $0 } == ["due first", "blocking result at 1.0 seconds"])
  }

  @Test func aLiveSchedulerRunsBlockingWorkOffItsQueueAndDeliversOnIt() async {
    let scheduler = LiveScheduler()
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<(Bool, Bool), Never>) in
      scheduler.performBlocking({ scheduler.isCurrent }) { workWasOnQueue in
        continuation.resume(returning: (workWasOnQueue, scheduler.isCurrent))
      }
    }
    #expect(result == (false, true))
  }
}
