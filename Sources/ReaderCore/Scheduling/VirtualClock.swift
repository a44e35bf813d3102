import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A deterministic scheduler and `Clock` whose time moves only when told.
///
/// Like an embedded event loop: work is ordered by (deadline, submission), `now` is set to an
/// item's deadline before it runs, and same-deadline work runs in submission order. Nothing runs
/// until the owner calls `advance(by:)`, `runUntilIdle()` or `runUntilQuiet(limit:)`; a 24-hour
/// timer therefore fires in microseconds of real time. Only one thread may drive the clock at a
/// time; any thread may submit work.
///
/// ```swift
/// let clock = VirtualClock()
/// clock.schedule(after: .seconds(10)) { print("fired at", clock.elapsed) }
/// clock.advance(by: .seconds(9))   // nothing
/// clock.advance(by: .seconds(1))   // fired at 10.0 seconds
/// ```
public final class VirtualClock: Scheduler, Clock, Sendable {
  /// An instant on the virtual time line: the time elapsed since the clock was created.
  public struct Instant: InstantProtocol, Sendable, Hashable, Comparable {
    /// Time since the clock's start.
    public var offset: Duration
    /// Creates an instant.
    public init(offset: Duration) { self.offset = offset }
    public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
    public func duration(to other: Instant) -> Duration { other.offset - offset }
    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
  }

  private struct State {
    var now: Duration = .zero
    var queue = WorkQueue()
    var driving = false
  }

  private let state = Locked(State())
  /// The thread driving the clock, which runs its work items, while it does (0 otherwise).
  private let runner = Atomic<UInt>(0)
  /// `state.now`, as the driving thread sets it (under the lock): only the driver moves time, so it can read
  /// `now` here without taking the lock, which its work items do at every step. Other threads read `state`.
  private nonisolated(unsafe) var driverNow = Duration.zero

  /// Creates a clock at time zero.
  public init() {}

  /// Time elapsed since the clock was created.
  public var elapsed: Duration {
    runner.load(ordering: .relaxed) == Self.currentThread ? driverNow : state.withLock { $0.now }
  }
  /// The clock's current instant.
  public var now: Instant { Instant(offset: elapsed) }
  /// Virtual time has no resolution limit.
  public var minimumResolution: Duration { .nanoseconds(1) }
  /// Work submitted and not yet run or cancelled.
  public var pendingWorkCount: Int { state.withLock { $0.queue.count } }
  /// Entries the queue holds, pending work and cancelled work not dropped yet (for tests of the bound).
  var storedWorkCount: Int { state.withLock { $0.queue.storedKeyCount } }
  /// The deadline of the next work due, if any.
  public var nextDeadline: Duration? { state.withLock { $0.queue.nextDeadline() } }

  @discardableResult
  public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
    // In attoseconds, which add and compare inline, where `Duration`'s `+` and `<` are calls into the
    // standard library (for every advertisement of a simulated world).
    let delay = delay.attoseconds
    return state.withLock {
      $0.queue.push(deadline: Duration(attoseconds: $0.now.attoseconds + (delay > 0 ? delay : 0)), work)
    }
  }

  public func cancel(_ work: ScheduledWork) {
    state.withLock { $0.queue.cancel(work) }
  }

  public var isCurrent: Bool {
    runner.load(ordering: .relaxed) == Self.currentThread
  }

  /// Runs `work` at once on the calling thread (virtual time stands still meanwhile) and delivers
  /// its result as the next work item due now, after the work already due.
  public func performBlocking<T: Sendable>(
    _ work: @escaping @Sendable () -> T, then deliver: @escaping @Sendable (T) -> Void
  ) {
    let result = work()
    execute { deliver(result) }
  }

  private static var currentThread: UInt {
    #if canImport(Darwin)
      UInt(bitPattern: pthread_self())
    #else
      UInt(pthread_self())
    #endif
  }

  /// Runs everything due within `duration` from now, in order, then sets `now` to the end.
  public func advance(by duration: Duration) {
    advance(to: elapsed + max(duration, .zero))
  }

  /// Runs everything due up to `deadline`, in order, then sets `now` to `deadline` (if later).
  public func advance(to deadline: Duration) {
    drive(by: deadline, movingTime: true)
  }

  /// Runs the work that is due now (including work that work submits for now), without moving time.
  public func runUntilIdle() {
    drive(by: nil, movingTime: false)
  }

  /// Jumps from deadline to deadline, running everything, until no work is left or `limit` is
  /// reached; returns whether the queue emptied. For soak runs that need no pacing.
  @discardableResult
  public func runUntilQuiet(limit: Duration) -> Bool {
    // Time stops at the last work run, not at the limit.
    drive(by: limit, movingTime: false)
    return pendingWorkCount == 0
  }

  /// Runs, as the one driver of the clock and marked as running its work on this thread, the work due
  /// by `limit` (`nil`: by `now` as the drive starts), one at a time and in order, with `now` set to
  /// each item's deadline; then, if `movingTime`, sets `now` to `limit` (if later).
  ///
  /// One lock per item around taking it from the queue, the first of which also starts the drive, and the
  /// one that finds nothing more due also ends it: a run of a few items (a session's steps) takes few
  /// locks, and a drive that finds nothing due takes one.
  private func drive(by limit: Duration?, movingTime: Bool) {
    let thread = Self.currentThread
    var started = false
    var drivenElsewhere = false
    var end = limit ?? .zero
    while let due = state.withLock({ state -> Due? in
      if !started {
        guard !state.driving else {
          drivenElsewhere = true
          return nil
        }
        started = true
        state.driving = true
        driverNow = state.now
        if limit == nil { end = state.now }
        // Set and cleared by the driver alone: a thread reading its own id here is the driver.
        runner.store(thread, ordering: .relaxed)
      }
      if let item = state.queue.pop(dueBy: end) {
        if item.deadline.attoseconds > state.now.attoseconds { state.now = item.deadline }
        driverNow = state.now
        return Due(work: item.work)
      }
      if movingTime, end.attoseconds > state.now.attoseconds {
        state.now = end
        driverNow = end
      }
      runner.store(0, ordering: .relaxed)
      state.driving = false
      return nil
    }) {
      due.work()
    }
    if drivenElsewhere { preconditionFailure("VirtualClock is driven from two places at once") }
  }

  /// A work item taken from the queue, out of the lock. A struct rather than the bare closure: a closure
  /// returned through `withLock`'s generic result is wrapped in a thunk allocated for the purpose (once per
  /// item run), where a struct holding it passes through as it is.
  private struct Due {
    var work: @Sendable () -> Void
  }

  /// Fails (returns a description) when work is still pending, for test teardown.
  public func checkNoPendingWork() -> String? {
    let (count, next) = state.withLock { ($0.queue.count, $0.queue.nextDeadline()) }
    guard count > 0 else { return nil }
    return "\(count) scheduled item(s) still pending, next at \(next.map { "\($0)" } ?? "?")"
  }

  // MARK: Clock

  /// Suspends until the virtual time reaches `deadline`; throws `CancellationError` if the task is
  /// cancelled first. A deadline already reached returns at once, as a real clock's sleep does.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    if deadline.offset <= elapsed {
      try Task.checkCancellation()
      return
    }
    let sleeper = Sleeper()
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        guard sleeper.install(continuation) else { return }
        let work = schedule(after: deadline.offset - elapsed) { sleeper.resume(with: .success(())) }
        // A cancellation that lands between `install` and here could not see the wake-up to drop it.
        if !sleeper.attach(work) { cancel(work) }
      }
    } onCancel: {
      if let work = sleeper.resume(with: .failure(CancellationError())) { cancel(work) }
    }
  }

}

/// One sleeping task: resumed exactly once, by its timer or by cancellation, whichever comes first.
private final class Sleeper: Sendable {
  private enum Phase {
    case waiting
    case suspended(CheckedContinuation<Void, any Error>, ScheduledWork?)
    case cancelledEarly
    case done
  }

  private let phase = Locked(Phase.waiting)

  /// Returns false when cancellation won the race before suspension (the continuation is resumed).
  func install(_ continuation: CheckedContinuation<Void, any Error>) -> Bool {
    let cancelled = phase.withLock { phase -> Bool in
      if case .cancelledEarly = phase {
        phase = .done
        return true
      }
      phase = .suspended(continuation, nil)
      return false
    }
    if cancelled { continuation.resume(throwing: CancellationError()) }
    return !cancelled
  }

  /// Returns false when the sleeper was already resumed, so `work` is the caller's to cancel.
  func attach(_ work: ScheduledWork) -> Bool {
    phase.withLock { phase in
      guard case .suspended(let continuation, nil) = phase else { return false }
      phase = .suspended(continuation, work)
      return true
    }
  }

  /// Resumes the sleeper if it is still waiting; returns its timer so the caller can drop it.
  @discardableResult
  func resume(with result: Result<Void, any Error>) -> ScheduledWork? {
    let taken = phase.withLock { phase -> (CheckedContinuation<Void, any Error>, ScheduledWork?)? in
      switch phase {
      case .waiting:
        phase = .cancelledEarly
        return nil
      case .suspended(let continuation, let work):
        phase = .done
        return (continuation, work)
      case .cancelledEarly, .done:
        return nil
      }
    }
    guard let (continuation, work) = taken else { return nil }
    continuation.resume(with: result)
    return work
  }
}
