import Dispatch
import Synchronization

/// A `Scheduler` on real time: work runs on one serial dispatch queue, waits go through `clock`.
///
/// Use it for real hardware; use `VirtualClock` for the simulator and tests.
public final class LiveScheduler<C: Clock>: Scheduler, Sendable where C.Duration == Duration {
  private let clock: C
  private let start: C.Instant
  private let queue: DispatchQueue
  private let pending = Mutex(Set<UInt64>())
  private let counter = Mutex<UInt64>(0)

  /// Creates a scheduler that measures and waits with `clock`.
  public init(clock: C, label: String = "ReaderKit.LiveScheduler") {
    self.clock = clock
    self.start = clock.now
    self.queue = DispatchQueue(label: label)
  }

  public var elapsed: Duration { start.duration(to: clock.now) }

  @discardableResult
  public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
    let id = counter.withLock { value -> UInt64 in
      defer { value += 1 }
      return value
    }
    let handle = ScheduledWork(id: id, deadline: elapsed + delay)
    pending.withLock { _ = $0.insert(id) }
    let fire: @Sendable () -> Void = { [self] in
      guard pending.withLock({ $0.remove(id) != nil }) else { return }
      work()
    }
    if delay <= .zero {
      queue.async(execute: fire)
    } else {
      let clock = self.clock
      let deadline = start.advanced(by: handle.deadline)
      let queue = self.queue
      Task {
        try? await clock.sleep(until: deadline, tolerance: nil)
        queue.async(execute: fire)
      }
    }
    return handle
  }

  public func cancel(_ work: ScheduledWork) {
    pending.withLock { _ = $0.remove(work.id) }
  }
}

extension LiveScheduler where C == ContinuousClock {
  /// A scheduler on the system's continuous clock.
  public convenience init(label: String = "ReaderKit.LiveScheduler") {
    self.init(clock: ContinuousClock(), label: label)
  }
}
