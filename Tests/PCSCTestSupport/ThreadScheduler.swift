import Foundation
import ReaderCore

/// A `Scheduler` on real time whose work, timers included, runs on a thread of its own.
///
/// `LiveScheduler` waits for its timers in Swift concurrency tasks; a test process whose synchronous
/// tests block every thread of the cooperative pool (each waiting on a child process, a lock or a
/// semaphore) would starve those tasks. The daemon tests run their reader systems on this one instead,
/// so that what they measure is the radio, not the test runner's thread pool.
public final class ThreadScheduler: Scheduler, @unchecked Sendable {
  private struct Item {
    var handle: ScheduledWork
    var work: @Sendable () -> Void
  }

  private let start = ContinuousClock.now
  /// The date `elapsed` counts from.
  public let epoch = Date.now
  private let condition = NSCondition()
  /// Guarded by `condition`.
  private var items: [Item] = []
  private var cancelled: Set<UInt64> = []
  private var next: UInt64 = 0
  private var thread: Thread?

  public init(label: String) {
    let thread = Thread { [unowned self] in self.loop() }
    thread.name = label
    self.thread = thread
    thread.start()
  }

  public var elapsed: Duration { ContinuousClock.now - start }

  public var isCurrent: Bool { Thread.current == thread }

  @discardableResult
  public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
    condition.lock()
    defer { condition.unlock() }
    let handle = ScheduledWork(id: next, deadline: elapsed + max(delay, .zero))
    next += 1
    // Kept in (deadline, submission) order: ties run in submission order.
    let index = items.firstIndex { $0.handle.deadline > handle.deadline } ?? items.endIndex
    items.insert(Item(handle: handle, work: work), at: index)
    condition.signal()
    return handle
  }

  public func cancel(_ work: ScheduledWork) {
    condition.lock()
    cancelled.insert(work.id)
    condition.unlock()
  }

  private func loop() {
    condition.lock()
    while true {
      guard let first = items.first else {
        condition.wait()
        continue
      }
      let wait = first.handle.deadline - elapsed
      if wait > .zero {
        _ = condition.wait(
          until: Date(
            timeIntervalSinceNow: Double(wait.components.seconds)
              + Double(wait.components.attoseconds) / 1e18))
        continue
      }
      items.removeFirst()
      guard cancelled.remove(first.handle.id) == nil else { continue }
      condition.unlock()
      first.work()
      condition.lock()
    }
  }
}
