import ReaderKit

/// Benchmarks the scheduler, `VirtualClock`, against `BareHeap` doing the same work in the same round (see
/// `Comparison`); every work item counts itself, and the counts are checked.
///
/// - `fire`: `items` work items with seeded random deadlines within a day (to the millisecond) scheduled,
///   then all run.
/// - `cancel`: the same, with every second item cancelled before they run.
/// - `cancel only`: cancelling every item of `items` scheduled ones (the scheduling not timed).
/// - `steady`: `steadySize` items pending at all times: each one that runs schedules the next, a seeded random
///   1 ms to 1 s later, until `items` have run.
func runSchedulerBenchmark(items: Int, steadySize: Int) -> [Ratio] {
  let count = max(2, items)
  var random = SeededRandom(seed: 7)
  let deadlines = (0..<count).map { _ in Duration.milliseconds(Int64(random.next() % 86_400_000)) }
  let delays = (0..<count).map { _ in Duration.milliseconds(1 + Int64(random.next() % 1_000)) }
  let end = Duration.seconds(86_400)

  let timings = Comparison([
    .init("scheduler.fire.virtualClock") {
      let (clock, counter) = (VirtualClock(), Counter())
      for deadline in deadlines { clock.schedule(after: deadline) { counter.increment() } }
      clock.advance(to: end)
      precondition(counter.value == count, "every item ran")
    },
    .init("scheduler.fire.heap") {
      var (heap, counter) = (BareHeap(), Counter())
      for deadline in deadlines { heap.schedule(after: deadline) { counter.increment() } }
      while let work = heap.next() { work() }
      precondition(counter.value == count, "every item ran")
    },
    .init("scheduler.cancel.virtualClock") {
      let (clock, counter) = (VirtualClock(), Counter())
      var handles: [ScheduledWork] = []
      handles.reserveCapacity(count)
      for deadline in deadlines { handles.append(clock.schedule(after: deadline) { counter.increment() }) }
      for index in stride(from: 0, to: count, by: 2) { clock.cancel(handles[index]) }
      clock.advance(to: end)
      precondition(counter.value == count / 2, "every item not cancelled ran")
    },
    .init("scheduler.cancel.heap") {
      var (heap, counter) = (BareHeap(), Counter())
      var handles: [Int] = []
      handles.reserveCapacity(count)
      for deadline in deadlines { handles.append(heap.schedule(after: deadline) { counter.increment() }) }
      for index in stride(from: 0, to: count, by: 2) { heap.cancel(handles[index]) }
      while let work = heap.next() { work() }
      precondition(counter.value == count / 2, "every item not cancelled ran")
    },
    .withSetUp("scheduler.cancelOnly.virtualClock") {
      let clock = VirtualClock()
      let handles = deadlines.map { clock.schedule(after: $0) {} }
      return ({ for handle in handles { clock.cancel(handle) } }, { precondition(clock.pendingWorkCount == 0) })
    },
    .withSetUp("scheduler.cancelOnly.heap") {
      let heap = HeapBox()
      let handles = deadlines.map { heap.heap.schedule(after: $0) {} }
      return ({ heap.cancelAll(handles) }, { precondition(heap.heap.next() == nil) })
    },
    .init("scheduler.steady.virtualClock") {
      let load = SteadyVirtualClockLoad(delays: delays, pending: steadySize)
      load.clock.advance(to: .seconds(Int64(count) * 1_000))
      precondition(load.fired == count, "every item ran")
    },
    .init("scheduler.steady.heap") {
      let load = SteadyHeapLoad(delays: delays)
      var heap = BareHeap()
      var scheduled = 0
      while scheduled < min(steadySize, count) {
        heap.schedule(after: delays[scheduled]) { [load] in load.fired += 1 }
        scheduled += 1
      }
      while let work = heap.next() {
        work()
        if scheduled < count {
          heap.schedule(after: delays[scheduled]) { [load] in load.fired += 1 }
          scheduled += 1
        }
      }
      precondition(load.fired == count, "every item ran")
    },
  ]).measure()

  let ratios = [
    timings.ratio(
      "scheduler.fire: heap / VirtualClock", "scheduler.fire.heap", over: "scheduler.fire.virtualClock",
      goal: .atLeast(1)),
    timings.ratio(
      "scheduler.cancel: heap / VirtualClock", "scheduler.cancel.heap", over: "scheduler.cancel.virtualClock",
      goal: .atLeast(1)),
    timings.ratio(
      "scheduler.steady: heap / VirtualClock", "scheduler.steady.heap", over: "scheduler.steady.virtualClock",
      goal: .atLeast(1)),
    timings.ratio(
      "scheduler.cancelOnly: heap / VirtualClock", "scheduler.cancelOnly.heap",
      over: "scheduler.cancelOnly.virtualClock"),
  ]
  let cancelNanoseconds = { (name: String) in timings.median(name) / Double(count) * 1e9 }
  print(
    """
    Scheduler benchmark: \(BenchOptions.current.rounds) rounds; VirtualClock against a bare binary heap (no lock)
      fire: \(count) items with random deadlines scheduled, then run; cancel: the same with every second one \
    cancelled first
      steady: \(steadySize) items pending at all times, each scheduling the next when it runs, \(count) run in all
      cancel alone: \(String(format: "%.1f", cancelNanoseconds("scheduler.cancelOnly.virtualClock"))) ns per \
    VirtualClock cancel, \(String(format: "%.1f", cancelNanoseconds("scheduler.cancelOnly.heap"))) ns per heap \
    cancel (medians)
    """)
  print(ratios.map(\.line).joined(separator: "\n"))
  return ratios
}

/// Counts the work items that ran.
private final class Counter: @unchecked Sendable {
  // Only touched on the thread that drives the clock.
  private(set) var value = 0
  func increment() { value += 1 }
}

/// `pending` items on a `VirtualClock`, each scheduling the next until `delays.count` have run.
private final class SteadyVirtualClockLoad: @unchecked Sendable {
  // Only touched on the thread that drives the clock.
  let clock = VirtualClock()
  private let delays: [Duration]
  private var scheduled = 0
  private(set) var fired = 0

  init(delays: [Duration], pending: Int) {
    self.delays = delays
    for _ in 0..<min(pending, delays.count) { scheduleNext() }
  }

  private func scheduleNext() {
    let delay = delays[scheduled]
    scheduled += 1
    clock.schedule(after: delay) { [self] in
      fired += 1
      if scheduled < delays.count { scheduleNext() }
    }
  }
}

/// What the work of the steady load on a `BareHeap` counts (the heap itself is a local value of the loop that
/// drives it, which schedules the next item after each one runs, as `SteadyVirtualClockLoad`'s items do).
private final class SteadyHeapLoad {
  var fired = 0
  let delays: [Duration]
  init(delays: [Duration]) { self.delays = delays }
}

/// A heap whose cancels are timed on their own.
private final class HeapBox {
  var heap = BareHeap()

  func cancelAll(_ handles: [Int]) {
    var heap = self.heap
    self.heap = BareHeap()
    for handle in handles { heap.cancel(handle) }
    self.heap = heap
  }
}
