import Dispatch
import TestSupport
import Testing

@testable import ReaderCore

/// A thread-safe list that scheduled work appends to.
final class Recorder<Value: Sendable>: Sendable {
  private let storage = Locked<[Value]>([])

  func append(_ value: Value) { storage.withLock { $0.append(value) } }
  var values: [Value] { storage.withLock { $0 } }
}

/// Yields, a bounded number of times and without reading any clock, until `condition` holds.
func waitUntil(
  _ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool
) async {
  for _ in 0..<1_000_000 {
    if condition() { return }
    await Task.yield()
  }
  Issue.record("gave up waiting until \(what)", sourceLocation: sourceLocation)
}

/// Waits until `clock` holds at least `count` pending items: a task that calls `sleep` registers
/// its wake-up as scheduled work, which is the signal that it is asleep.
func waitForPendingWork(
  _ clock: VirtualClock, count: Int, sourceLocation: SourceLocation = #_sourceLocation
) async {
  await waitUntil("the clock holds \(count) pending item(s)", sourceLocation: sourceLocation) {
    clock.pendingWorkCount >= count
  }
}

@Suite(.timeLimit(.minutes(2))) struct VirtualClockTests {
  @Test func nothingRunsUntilTheClockIsDriven() {
    let clock = VirtualClock()
    let log = Recorder<String>()
    clock.schedule(after: .zero) { log.append("now") }
    clock.schedule(after: .seconds(1)) { log.append("later") }
    #expect(log.values.isEmpty)
    #expect(clock.pendingWorkCount == 2)
    #expect(clock.elapsed == .zero)
  }

  @Test func aTimerFiresAtItsDeadlineAndNotBefore() {
    let clock = VirtualClock()
    let log = Recorder<Duration>()
    clock.schedule(after: .seconds(10)) { log.append(clock.elapsed) }
    clock.advance(by: .seconds(9))
    #expect(log.values.isEmpty)
    #expect(clock.elapsed == .seconds(9))
    clock.advance(by: .seconds(1))
    #expect(log.values == [.seconds(10)])
    #expect(clock.checkNoPendingWork() == nil)
  }

  @Test func workRunsInDeadlineOrderThenSubmissionOrder() {
    let clock = VirtualClock()
    let log = Recorder<String>()
    clock.schedule(after: .seconds(3)) { log.append("c") }
    clock.schedule(after: .seconds(1)) { log.append("a1") }
    clock.schedule(after: .seconds(2)) { log.append("b") }
    clock.schedule(after: .seconds(1)) { log.append("a2") }
    clock.schedule(after: .seconds(1)) { log.append("a3") }
    clock.advance(by: .seconds(5))
    #expect(log.values == ["a1", "a2", "a3", "b", "c"])
  }

  @Test func nowIsEachItemsDeadlineWhileItRuns() {
    let clock = VirtualClock()
    let log = Recorder<Duration>()
    for ms in [700, 100, 400, 400] {
      clock.schedule(after: .milliseconds(ms)) { log.append(clock.elapsed) }
    }
    clock.advance(by: .seconds(2))
    #expect(log.values == [.milliseconds(100), .milliseconds(400), .milliseconds(400), .milliseconds(700)])
    #expect(clock.elapsed == .seconds(2))
    #expect(clock.now == VirtualClock.Instant(offset: .seconds(2)))
  }

  @Test func workScheduledFromWorkIsMeasuredFromTheRunningItemsDeadline() {
    let clock = VirtualClock()
    let log = Recorder<String>()
    clock.schedule(after: .seconds(1)) {
      log.append("first at \(clock.elapsed)")
      clock.schedule(after: .seconds(2)) { log.append("second at \(clock.elapsed)") }
      clock.schedule(after: .seconds(10)) { log.append("too late") }
    }
    clock.advance(by: .seconds(5))
    #expect(log.values == ["first at 1.0 seconds", "second at 3.0 seconds"])
    #expect(clock.pendingWorkCount == 1)
    #expect(clock.nextDeadline == .seconds(11))
  }

  @Test func immediateWorkSubmittedByWorkRunsAfterWorkAlreadyDueAtTheSameInstant() {
    let clock = VirtualClock()
    let log = Recorder<String>()
    clock.schedule(after: .seconds(1)) {
      log.append("a")
      clock.execute { log.append("a's follow-up") }
    }
    clock.schedule(after: .seconds(1)) { log.append("b") }
    clock.advance(by: .seconds(1))
    #expect(log.values == ["a", "b", "a's follow-up"])
  }

  @Test func aNegativeDelayMeansNow() {
    let clock = VirtualClock()
    clock.advance(by: .seconds(3))
    let log = Recorder<Duration>()
    let work = clock.schedule(after: .seconds(-2)) { log.append(clock.elapsed) }
    #expect(work.deadline == .seconds(3))
    clock.runUntilIdle()
    #expect(log.values == [.seconds(3)])
  }

  @Test func cancelledWorkNeverRuns() {
    let clock = VirtualClock()
    let log = Recorder<String>()
    let a = clock.schedule(after: .seconds(1)) { log.append("a") }
    clock.schedule(after: .seconds(2)) { log.append("b") }
    clock.cancel(a)
    #expect(clock.pendingWorkCount == 1)
    #expect(clock.nextDeadline == .seconds(2), "the cancelled item no longer counts as next")
    clock.advance(by: .seconds(3))
    #expect(log.values == ["b"])
  }

  @Test func cancellingWorkThatRanOrWasCancelledIsHarmless() {
    let clock = VirtualClock()
    let log = Recorder<String>()
    let a = clock.schedule(after: .seconds(1)) { log.append("a") }
    clock.advance(by: .seconds(1))
    clock.cancel(a)
    let b = clock.schedule(after: .seconds(1)) { log.append("b") }
    clock.cancel(b)
    clock.cancel(b)
    #expect(clock.pendingWorkCount == 0)
    clock.schedule(after: .seconds(1)) { log.append("c") }
    clock.advance(by: .seconds(1))
    #expect(log.values == ["a", "c"])
  }

  @Test func workCanCancelLaterWorkDueAtTheSameInstant() {
    let clock = VirtualClock()
    let log = Recorder<String>()
    let victim = Locked<ScheduledWork?>(nil)
    clock.schedule(after: .seconds(1)) {
      log.append("a")
      if let work = victim.withLock({ $0 }) { clock.cancel(work) }
    }
    victim.withLock { $0 = clock.schedule(after: .seconds(1)) { log.append("b") } }
    clock.advance(by: .seconds(1))
    #expect(log.values == ["a"])
    #expect(clock.checkNoPendingWork() == nil)
  }

  @Test func reArmingATimerBehindALiveOneHoldsNoMoreThanAFewEntries() {
    let clock = VirtualClock()
    let log = Recorder<String>()
    clock.schedule(after: .seconds(3_600)) { log.append("live") }
    var armed = clock.schedule(after: .seconds(1)) { log.append("re-armed") }
    var largest = 0
    for _ in 0..<100_000 {
      clock.cancel(armed)
      armed = clock.schedule(after: .seconds(1)) { log.append("re-armed") }
      largest = max(largest, clock.storedWorkCount)
    }
    #expect(clock.pendingWorkCount == 2)
    #expect(largest <= 2 * 2 + 66, "cancelled work does not pile up: \(largest) entries held")
    clock.advance(by: .seconds(3_600))
    #expect(log.values == ["re-armed", "live"])
    #expect(clock.storedWorkCount == 0)
  }

  @Test func advanceToAnEarlierInstantNeverMovesTimeBack() {
    let clock = VirtualClock()
    clock.advance(to: .seconds(5))
    clock.advance(to: .seconds(2))
    #expect(clock.elapsed == .seconds(5))
    clock.advance(by: .seconds(-1))
    #expect(clock.elapsed == .seconds(5))
  }

  @Test func advanceToRunsWorkDueAtExactlyTheTarget() {
    let clock = VirtualClock()
    let log = Recorder<String>()
    clock.schedule(after: .seconds(4)) { log.append("at 4") }
    clock.schedule(after: .nanoseconds(4_000_000_001)) { log.append("just after 4") }
    clock.advance(to: .seconds(4))
    #expect(log.values == ["at 4"])
    #expect(clock.pendingWorkCount == 1)
  }

  @Test func runUntilIdleRunsOnlyWhatIsDueNow() {
    let clock = VirtualClock()
    let log = Recorder<String>()
    clock.execute {
      log.append("now")
      clock.execute { log.append("chained now") }
    }
    clock.schedule(after: .milliseconds(1)) { log.append("later") }
    clock.runUntilIdle()
    #expect(log.values == ["now", "chained now"])
    #expect(clock.elapsed == .zero)
    #expect(clock.pendingWorkCount == 1)
  }

  @Test func runUntilQuietJumpsDeadlineToDeadline() {
    let clock = VirtualClock()
    let log = Recorder<Duration>()
    clock.schedule(after: .seconds(86_400)) {
      log.append(clock.elapsed)
      clock.schedule(after: .seconds(30)) { log.append(clock.elapsed) }
    }
    #expect(clock.runUntilQuiet(limit: .seconds(100_000)))
    #expect(log.values == [.seconds(86_400), .seconds(86_430)])
    #expect(clock.elapsed == .seconds(86_430), "time stops at the last work, not at the limit")
  }

  @Test func runUntilQuietStopsAtItsLimit() {
    let clock = VirtualClock()
    let log = Recorder<Int>()
    clock.schedule(after: .seconds(5)) { log.append(5) }
    clock.schedule(after: .seconds(10)) { log.append(10) }
    clock.schedule(after: .seconds(11)) { log.append(11) }
    #expect(!clock.runUntilQuiet(limit: .seconds(10)))
    #expect(log.values == [5, 10])
    #expect(clock.nextDeadline == .seconds(11))
  }

  @Test func runUntilQuietOnAnEmptyClockIsQuiet() {
    let clock = VirtualClock()
    #expect(clock.runUntilQuiet(limit: .seconds(1)))
    #expect(clock.elapsed == .zero)
  }

  @Test func checkNoPendingWorkReportsWhatIsLeft() {
    let clock = VirtualClock()
    #expect(clock.checkNoPendingWork() == nil)
    let a = clock.schedule(after: .seconds(3)) {}
    clock.schedule(after: .seconds(7)) {}
    #expect(clock.checkNoPendingWork() == "2 scheduled item(s) still pending, next at 3.0 seconds")
    clock.cancel(a)
    #expect(clock.checkNoPendingWork() == "1 scheduled item(s) still pending, next at 7.0 seconds")
    clock.advance(by: .seconds(7))
    #expect(clock.checkNoPendingWork() == nil)
  }

  @Test func handlesCarryTheirDeadlineAndUniqueIDs() {
    let clock = VirtualClock()
    clock.advance(by: .seconds(2))
    let a = clock.schedule(after: .seconds(1)) {}
    let b = clock.schedule(after: .seconds(1)) {}
    #expect(a.deadline == .seconds(3))
    #expect(a != b)
    #expect(a.id < b.id)
  }

  @Test func workSubmittedFromManyThreadsRunsExactlyOnceInDeadlineOrder() {
    let clock = VirtualClock()
    let log = Recorder<(index: Int, at: Duration)>()
    DispatchQueue.concurrentPerform(iterations: 200) { index in
      clock.schedule(after: .milliseconds(index % 7)) { log.append((index, clock.elapsed)) }
    }
    #expect(clock.pendingWorkCount == 200)
    clock.advance(by: .seconds(1))
    let runs = log.values
    #expect(runs.map(\.index).sorted() == Array(0..<200))
    #expect(runs.map(\.at) == runs.map(\.at).sorted())
    #expect(runs.allSatisfy { $0.at == .milliseconds($0.index % 7) })
  }

  @Test func instantsMeasureDurationsBetweenThem() {
    let start = VirtualClock.Instant(offset: .seconds(2))
    let end = start.advanced(by: .milliseconds(1_500))
    #expect(start.duration(to: end) == .milliseconds(1_500))
    #expect(end.duration(to: start) == .milliseconds(-1_500))
    #expect(start < end)
    #expect(VirtualClock().minimumResolution == .nanoseconds(1))
  }

  // MARK: Clock.sleep

  @Test func sleepResumesAtItsVirtualDeadline() async throws {
    let clock = VirtualClock()
    let woke = Recorder<Duration>()
    let sleeper = Task {
      try await clock.sleep(until: VirtualClock.Instant(offset: .seconds(5)))
      woke.append(clock.elapsed)
    }
    await waitForPendingWork(clock, count: 1)
    clock.advance(by: .seconds(4))
    #expect(woke.values.isEmpty)
    #expect(clock.pendingWorkCount == 1)
    clock.advance(by: .seconds(1))
    try await sleeper.valueCancelledWithCaller
    #expect(woke.values == [.seconds(5)])
    #expect(clock.checkNoPendingWork() == nil)
  }

  @Test func sleepForCountsFromTheCurrentVirtualTime() async throws {
    let clock = VirtualClock()
    clock.advance(by: .seconds(100))
    let sleeper = Task {
      try await clock.sleep(for: .seconds(30))
      return clock.elapsed
    }
    await waitForPendingWork(clock, count: 1)
    #expect(clock.nextDeadline == .seconds(130))
    clock.advance(by: .seconds(29))
    #expect(clock.pendingWorkCount == 1)
    clock.advance(by: .seconds(1))
    #expect(try await sleeper.valueCancelledWithCaller == .seconds(130))
  }

  @Test func sleepersWakeInDeadlineOrder() async throws {
    let clock = VirtualClock()
    let woke = Recorder<Int>()
    let sleepers = [3, 1, 2].map { seconds in
      Task {
        try await clock.sleep(until: VirtualClock.Instant(offset: .seconds(seconds)))
        woke.append(seconds)
      }
    }
    await waitForPendingWork(clock, count: 3)
    for second in 1...3 {
      clock.advance(by: .seconds(1))
      // Each wake-up resumes a task; wait for the one due now before moving on.
      await waitUntil("\(second) sleeper(s) woke") { woke.values.count >= second }
      #expect(woke.values.count == second)
    }
    for sleeper in sleepers { try await sleeper.valueCancelledWithCaller }
    #expect(woke.values == [1, 2, 3])
  }

  @Test func cancellingASleepingTaskThrowsAndDropsItsTimer() async {
    let clock = VirtualClock()
    let sleeper = Task { try await clock.sleep(until: VirtualClock.Instant(offset: .seconds(60))) }
    await waitForPendingWork(clock, count: 1)
    sleeper.cancel()
    let result = await sleeper.result
    #expect(throws: CancellationError.self) { try result.get() }
    #expect(clock.checkNoPendingWork() == nil, "a cancelled sleep must not leave its wake-up behind")
    #expect(clock.elapsed == .zero)
  }

  @Test func sleepUntilAPastDeadlineReturnsWithoutTheClockBeingDriven() async throws {
    let clock = VirtualClock()
    clock.advance(by: .seconds(5))
    try await clock.sleep(until: VirtualClock.Instant(offset: .seconds(2)))
    try await clock.sleep(until: clock.now)
    #expect(clock.elapsed == .seconds(5))
    #expect(clock.checkNoPendingWork() == nil)
  }

  @Test func sleepUntilAPastDeadlineInACancelledTaskThrows() async {
    let clock = VirtualClock()
    let sleeper = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await clock.sleep(until: clock.now)
    }
    let result = await sleeper.result
    #expect(throws: CancellationError.self) { try result.get() }
  }

  @Test func sleepingInAnAlreadyCancelledTaskThrowsAtOnce() async {
    let clock = VirtualClock()
    let sleeper = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await clock.sleep(until: VirtualClock.Instant(offset: .seconds(1)))
    }
    let result = await sleeper.result
    #expect(throws: CancellationError.self) { try result.get() }
    #expect(clock.checkNoPendingWork() == nil)
  }

  @Test func cancellingAfterTheWakeUpChangesNothing() async throws {
    let clock = VirtualClock()
    let sleeper = Task { try await clock.sleep(until: VirtualClock.Instant(offset: .seconds(1))) }
    await waitForPendingWork(clock, count: 1)
    clock.advance(by: .seconds(1))
    try await sleeper.valueCancelledWithCaller
    sleeper.cancel()
    #expect(clock.checkNoPendingWork() == nil)
  }
}

@Suite struct WorkQueueTests {
  @Test func popsInDeadlineThenSubmissionOrderUnderRandomPushesAndCancels() {
    for seed in UInt64(1)...100 {
      var random = SeededRandom(seed: seed)
      var queue = WorkQueue()
      var model: [ScheduledWork] = []
      var pushes: UInt64 = 0
      let ran = Recorder<UInt64>()
      for _ in 0..<300 {
        switch random.next() % 4 {
        case 0, 1:
          // Few distinct deadlines, so ties are common.
          let id = pushes
          pushes += 1
          let handle = queue.push(deadline: .seconds(Int(random.next() % 8))) { ran.append(id) }
          #expect(handle.id == id, "seed \(seed)")
          model.append(handle)
        case 2:
          guard !model.isEmpty else { continue }
          let victim = model.remove(at: Int(random.next() % UInt64(model.count)))
          queue.cancel(victim)
        default:
          let limit = Duration.seconds(Int(random.next() % 8))
          let expected = model.filter { $0.deadline <= limit }.min {
            ($0.deadline, $0.id) < ($1.deadline, $1.id)
          }
          let popped = queue.pop(dueBy: limit)
          #expect(popped?.deadline == expected?.deadline, "seed \(seed)")
          popped?.work()
          if let expected {
            #expect(ran.values.last == expected.id, "seed \(seed): popped the wrong item")
            model.removeAll { $0 == expected }
          }
        }
        #expect(queue.count == model.count, "seed \(seed)")
        #expect(queue.nextDeadline() == model.map(\.deadline).min(), "seed \(seed)")
      }
    }
  }

  @Test func popReturnsTheWorkOfTheEarliestItem() {
    var queue = WorkQueue()
    let log = Recorder<String>()
    _ = queue.push(deadline: .seconds(2)) { log.append("late") }
    _ = queue.push(deadline: .seconds(1)) { log.append("early") }
    queue.pop(dueBy: .seconds(10))?.work()
    #expect(log.values == ["early"])
    #expect(queue.pop(dueBy: .seconds(1)) == nil, "the remaining item is due later than the limit")
    #expect(queue.count == 1)
  }

  @Test func submissionNumbersIncreaseFromZero() {
    var queue = WorkQueue()
    let ids = (0..<5).map { _ in queue.push(deadline: .zero) {}.id }
    #expect(ids == [0, 1, 2, 3, 4])
  }

  @Test func reArmingATimerAMillionTimesBehindALiveOneKeepsTheQueueSmall() {
    var queue = WorkQueue()
    _ = queue.push(deadline: .seconds(86_400)) {}
    var armed = queue.push(deadline: .seconds(1)) {}
    var largest = (keys: 0, slots: 0)
    for round in 0..<1_000_000 {
      queue.cancel(armed)
      armed = queue.push(deadline: .seconds(1) + .nanoseconds(round)) {}
      largest = (max(largest.keys, queue.storedKeyCount), max(largest.slots, queue.storedSlotCount))
    }
    #expect(queue.count == 2)
    #expect(largest.keys <= 2 * 2 + 66, "cancelled keys are dropped once they outnumber live ones")
    #expect(largest.slots <= 3, "a cancelled submission's slot is reused")
    #expect(queue.pop(dueBy: .seconds(2)) != nil)
    #expect(queue.pop(dueBy: .seconds(2)) == nil)
    #expect(queue.nextDeadline() == .seconds(86_400))
  }

  @Test func cancellingWorkThatRanDoesNotTouchNewWorkInItsSlot() {
    var queue = WorkQueue()
    let log = Recorder<String>()
    let first = queue.push(deadline: .seconds(1)) { log.append("first") }
    queue.pop(dueBy: .seconds(1))?.work()
    let second = queue.push(deadline: .seconds(2)) { log.append("second") }
    #expect(second.slot == first.slot, "the slot is reused")
    queue.cancel(first)
    #expect(queue.count == 1)
    queue.pop(dueBy: .seconds(2))?.work()
    #expect(log.values == ["first", "second"])
  }

  @Test func cancellingTwiceFreesTheSlotOnce() {
    var queue = WorkQueue()
    let log = Recorder<String>()
    let victim = queue.push(deadline: .seconds(1)) { log.append("victim") }
    queue.cancel(victim)
    queue.cancel(victim)
    _ = queue.push(deadline: .seconds(2)) { log.append("a") }
    _ = queue.push(deadline: .seconds(3)) { log.append("b") }
    #expect(queue.count == 2)
    while let item = queue.pop(dueBy: .seconds(10)) { item.work() }
    #expect(log.values == ["a", "b"])
  }

  @Test func aHandleMadeOutsideTheQueueCancelsTheSubmissionWithItsNumber() {
    var queue = WorkQueue()
    let log = Recorder<String>()
    _ = queue.push(deadline: .seconds(1)) { log.append("kept") }
    let dropped = queue.push(deadline: .seconds(1)) { log.append("dropped") }
    queue.cancel(ScheduledWork(id: dropped.id, deadline: dropped.deadline))
    queue.cancel(ScheduledWork(id: 99, deadline: .seconds(1)))
    #expect(queue.count == 1)
    while let item = queue.pop(dueBy: .seconds(10)) { item.work() }
    #expect(log.values == ["kept"])
  }

  @Test func orderHoldsWhileCancelledKeysAreDroppedInBulk() {
    for seed in UInt64(1)...20 {
      var random = SeededRandom(seed: seed)
      var queue = WorkQueue()
      var model: [ScheduledWork] = []
      var now = Duration.zero
      var pushes: UInt64 = 0
      let ran = Recorder<UInt64>()
      for _ in 0..<4_000 {
        switch random.next() % 8 {
        case 0, 1, 2:
          let number = pushes
          pushes += 1
          // Mostly work due within the horizon, some due minutes away (past it, and past 2^64 attoseconds).
          let delay = random.next() % 4 == 0 ? random.next() % 200_000 : random.next() % 50
          model.append(queue.push(deadline: now + .milliseconds(Int(delay))) { ran.append(number) })
        case 3, 4, 5:
          guard !model.isEmpty else { continue }
          queue.cancel(model.remove(at: Int(random.next() % UInt64(model.count))))
        default:
          now += .milliseconds(Int(random.next() % 4 == 0 ? random.next() % 30_000 : random.next() % 10))
          while let item = queue.pop(dueBy: now) {
            let expected = model.min { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
            item.work()
            #expect(item.deadline == expected?.deadline && ran.values.last == expected?.id, "seed \(seed)")
            model.removeAll { $0 == expected }
          }
        }
        #expect(queue.count == model.count, "seed \(seed)")
        #expect(queue.storedKeyCount <= 2 * model.count + 66, "seed \(seed)")
      }
    }
  }

  @Test func workDueBeyondTheHorizonWaitsApartAndRunsInDeadlineOrderWithTheRest() {
    var queue = WorkQueue()
    let ran = Recorder<String>()
    _ = queue.push(deadline: .seconds(86_400)) { ran.append("day") }
    _ = queue.push(deadline: .seconds(61)) { ran.append("61 s") }
    _ = queue.push(deadline: .seconds(59)) { ran.append("59 s") }
    _ = queue.push(deadline: .seconds(61)) { ran.append("61 s, second") }
    #expect(queue.laterKeyCount == 3)
    #expect(queue.pop(dueBy: .seconds(60)).map { $0.work() } != nil)
    // Measured from the work taken last: 61 s is now near.
    _ = queue.push(deadline: .seconds(62)) { ran.append("62 s") }
    #expect(queue.laterKeyCount == 3)
    while let item = queue.pop(dueBy: .seconds(90_000)) { item.work() }
    #expect(ran.values == ["59 s", "61 s", "61 s, second", "62 s", "day"])
  }

  @Test func cancellingMostOfALargeQueueKeepsTheRestInOrder() {
    for seed in UInt64(1)...20 {
      var random = SeededRandom(seed: seed)
      var queue = WorkQueue()
      let ran = Recorder<UInt64>()
      var model: [ScheduledWork] = []
      for number in UInt64(0)..<2_000 {
        model.append(queue.push(deadline: .milliseconds(Int(random.next() % 500))) { ran.append(number) })
      }
      for _ in 0..<1_500 { queue.cancel(model.remove(at: Int(random.next() % UInt64(model.count)))) }
      #expect(queue.storedKeyCount < 2_000, "seed \(seed): the cancelled keys were dropped")
      while let item = queue.pop(dueBy: .seconds(1)) { item.work() }
      let expected = model.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }.map(\.id)
      #expect(ran.values == expected, "seed \(seed)")
    }
  }
}
