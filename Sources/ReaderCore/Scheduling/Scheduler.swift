import Dispatch

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A serial discrete-event scheduler: the one place the engine and the simulated world run.
///
/// Work runs one item at a time. Work due at the same instant runs in submission order, and `now`
/// is set to the item's deadline before it runs, so a run is a pure function of what was submitted.
/// `VirtualClock` is the deterministic implementation; `LiveScheduler` runs on real time.
public protocol Scheduler: AnyObject, Sendable {
  /// Whether the caller is running inside one of this scheduler's work items (for assertions: code
  /// confined to the scheduler checks it, as an event loop's `assertInEventLoop` does).
  var isCurrent: Bool { get }
  /// Runs `work`, which may block (file or network I/O), without holding up the scheduler's other
  /// work, then runs `deliver` with its result as a work item of the scheduler.
  ///
  /// The default runs `work` on a global dispatch queue. `VirtualClock` runs it at once, on the
  /// thread that submits it: virtual time does not move meanwhile, so the result arrives at the same
  /// virtual instant, after the work already due then, and a seeded run stays byte-identical.
  func performBlocking<T: Sendable>(
    _ work: @escaping @Sendable () -> T, then deliver: @escaping @Sendable (T) -> Void)
  /// Time elapsed since the scheduler started: the engine's notion of "now".
  var elapsed: Duration { get }
  /// The date at `elapsed == .zero`: the engine dates what it must (an update's `requiredAt`, the
  /// grace window) as `epoch` plus `elapsed`, and never reads the wall clock itself.
  var epoch: Date { get }
  /// Whether a run on this scheduler is a pure function of what was submitted (virtual time, as on a
  /// `VirtualClock`): a terminal then runs its delegates synchronously on it by default, in step with
  /// the event stream, instead of on the main actor. False unless the scheduler says otherwise.
  var isDeterministic: Bool { get }
  /// Runs `work` once `delay` has elapsed (immediately, but after already-queued work, for `.zero`).
  @discardableResult
  func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork
  /// Drops scheduled work that has not run yet; does nothing for work that ran or was cancelled.
  func cancel(_ work: ScheduledWork)
}

extension Scheduler {
  public var isDeterministic: Bool { false }

  /// Runs `work` as soon as the work already queued has run.
  public func execute(_ work: @escaping @Sendable () -> Void) {
    schedule(after: .zero, work)
  }

  public func performBlocking<T: Sendable>(
    _ work: @escaping @Sendable () -> T, then deliver: @escaping @Sendable (T) -> Void
  ) {
    DispatchQueue.global().async {
      let result = work()
      self.execute { deliver(result) }
    }
  }
}

/// A handle on work submitted to a `Scheduler`.
///
/// Two handles are equal when they name the same submission (number and deadline).
public struct ScheduledWork: Sendable, Hashable {
  /// The submission number; unique per scheduler.
  public let id: UInt64
  /// The instant (since the scheduler's start) the work is due.
  public let deadline: Duration
  /// Where the scheduler's queue keeps the work, so that a cancel goes straight to it; `nil` for a handle
  /// made with the public initializer, which the queue looks up by its submission number.
  let slot: UInt32?

  /// Creates a handle; schedulers call this.
  public init(id: UInt64, deadline: Duration) {
    self.init(id: id, deadline: deadline, slot: nil)
  }

  init(id: UInt64, deadline: Duration, slot: UInt32?) {
    self.id = id
    self.deadline = deadline
    self.slot = slot
  }

  public static func == (lhs: ScheduledWork, rhs: ScheduledWork) -> Bool {
    lhs.id == rhs.id && lhs.deadline == rhs.deadline
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(id)
    hasher.combine(deadline)
  }
}
