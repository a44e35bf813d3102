#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Wakes live schedulers at their deadlines from one thread of its own, so that a timer fires on time
/// even while every thread of Swift's cooperative pool is held (a busy host, or code that blocks a
/// pool thread): a `Task` sleeping on the clock needs a pool thread to wake, and would then run late
/// and out of step with the work that does not wait for the pool.
///
/// One thread serves the whole process; it starts with the first wake-up asked for and waits on a
/// condition variable for the earliest one (measured on `ContinuousClock`, re-checked after every
/// wait). A wake-up only calls its `wake` closure, which must be short (a `DispatchQueue.async`).
final class WakeUpThread: @unchecked Sendable {
  /// The process's wake-up thread.
  static let shared = WakeUpThread()

  private struct WakeUp {
    var at: ContinuousClock.Instant
    var order: UInt64
    var wake: @Sendable () -> Void

    func precedes(_ other: WakeUp) -> Bool { (at, order) < (other.at, other.order) }
  }

  // Guarded by `mutex`; `@unchecked Sendable` rests on that.
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
  /// A binary min-heap on (instant, order).
  private var heap: [WakeUp] = []
  private var submitted: UInt64 = 0
  private var started = false

  private init() {
    pthread_mutex_init(mutex, nil)
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    #if !canImport(Darwin)
      pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    #endif
    pthread_cond_init(condition, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  /// Calls `wake` (on the wake-up thread) once `instant` has come. Returns `false`, calling nothing,
  /// when the system cannot create the thread; the caller then wakes itself another way.
  func wake(at instant: ContinuousClock.Instant, _ wake: @escaping @Sendable () -> Void) -> Bool {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    if !started {
      guard DedicatedThread.start(named: "ReaderKit.wake", { [self] in run() }) else { return false }
      started = true
    }
    submitted += 1
    push(WakeUp(at: instant, order: submitted, wake: wake))
    if heap[0].order == submitted { pthread_cond_signal(condition) }  // A new earliest one.
    return true
  }

  /// The thread's loop: wait for the earliest wake-up, call every one that is due, forever.
  private func run() {
    pthread_mutex_lock(mutex)
    while true {
      guard let first = heap.first else {
        pthread_cond_wait(condition, mutex)
        continue
      }
      let remaining = ContinuousClock.now.duration(to: first.at)
      if remaining > .zero {
        var deadline = Self.monotonicNow(plus: remaining)
        pthread_cond_timedwait(condition, mutex, &deadline)
        continue  // Woken early by a new earliest one, or on time: look again.
      }
      let due = pop()
      pthread_mutex_unlock(mutex)
      due.wake()
      pthread_mutex_lock(mutex)
    }
  }

  /// `CLOCK_MONOTONIC` now plus `duration`, as the condition variable's clock measures it.
  private static func monotonicNow(plus duration: Duration) -> timespec {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let (seconds, attoseconds) = duration.components
    var total = Int64(now.tv_nsec) + attoseconds / 1_000_000_000 + 1  // Never early by a rounding.
    var wholeSeconds = Int64(now.tv_sec) + seconds + total / 1_000_000_000
    total %= 1_000_000_000
    if wholeSeconds < 0 { wholeSeconds = 0 }
    return timespec(tv_sec: .init(wholeSeconds), tv_nsec: .init(total))
  }

  private func push(_ wakeUp: WakeUp) {
    heap.append(wakeUp)
    var child = heap.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard heap[child].precedes(heap[parent]) else { break }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  private func pop() -> WakeUp {
    let first = heap[0]
    let last = heap.removeLast()
    guard !heap.isEmpty else { return first }
    heap[0] = last
    var parent = 0
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var smallest = parent
      if left < heap.count, heap[left].precedes(heap[smallest]) { smallest = left }
      if right < heap.count, heap[right].precedes(heap[smallest]) { smallest = right }
      if smallest == parent { break }
      heap.swapAt(parent, smallest)
      parent = smallest
    }
    return first
  }
}
