import Dispatch

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A `Scheduler` on real time: work runs on one serial dispatch queue, waits go through `clock`.
///
/// On `ContinuousClock` (the default) timers are woken by a thread of their own (one for the process),
/// never through Swift's cooperative pool: a timer fires on time even while the pool's threads are all
/// held, so it cannot run late behind work that arrived after its deadline. With another clock (a
/// `VirtualClock` in tests) the wait is a `Task` sleeping on that clock.
///
/// Work is kept in the same ordered queue as `VirtualClock`'s, on (deadline, submission): whichever
/// wake-up comes first runs everything due by then in that order, so work due at the same instant
/// runs in submission order however the waits end. Use it for real hardware; use `VirtualClock` for
/// the simulator and tests.
public final class LiveScheduler<C: Clock>: Scheduler, Sendable where C.Duration == Duration {
  private let clock: C
  private let start: C.Instant
  /// The wall-clock date the scheduler started at.
  public let epoch: Date
  private let queue: DispatchQueue
  private let work = Locked(WorkQueue())
  private let key = DispatchSpecificKey<UInt8>()

  /// Creates a scheduler that measures and waits with `clock`, starting at the wall-clock date
  /// `epoch` (the system's date now, by default: the one place ReaderKit reads it).
  public init(clock: C, label: String = "ReaderKit.LiveScheduler", epoch: Date = .now) {
    self.clock = clock
    self.start = clock.now
    self.epoch = epoch
    self.queue = DispatchQueue(label: label)
    queue.setSpecific(key: key, value: 1)
  }

  public var elapsed: Duration { start.duration(to: clock.now) }

  public var isCurrent: Bool { DispatchQueue.getSpecific(key: key) != nil }

  @discardableResult
  public func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> ScheduledWork {
    let deadline = elapsed + max(delay, .zero)
    let handle = work.withLock { $0.push(deadline: deadline, body) }
    if delay <= .zero {
      queue.async { self.runDue() }
    } else if let wake = start.advanced(by: deadline) as? ContinuousClock.Instant,
      WakeUpThread.shared.wake(at: wake, { self.queue.async { self.runDue() } })
    {
      // Woken by the wake-up thread.
    } else {
      let (clock, wake) = (self.clock, start.advanced(by: deadline))
      Task {
        try? await clock.sleep(until: wake, tolerance: nil)
        self.queue.async { self.runDue() }
      }
    }
    return handle
  }

  public func cancel(_ handle: ScheduledWork) {
    work.withLock { $0.cancel(handle) }
  }

  /// Runs, in order, everything due by now.
  private func runDue() {
    while let item = work.withLock({ $0.pop(dueBy: elapsed) }) {
      item.work()
    }
  }
}

extension LiveScheduler where C == ContinuousClock {
  /// A scheduler on the system's continuous clock.
  public convenience init(label: String = "ReaderKit.LiveScheduler", epoch: Date = .now) {
    self.init(clock: ContinuousClock(), label: label, epoch: epoch)
  }
}
