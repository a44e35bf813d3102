import Foundation
import ReaderCore
import ReaderKit

/// The scheduler BlueZ runs on in a live session: the session's clock, except that BlueZ's work that
/// does not answer a terminal's command — each D-Bus message and reply its thread hands over, each of
/// its timers — waits in an inbox until the session delivers it (`drive`), at an instant of its own
/// after the terminal's work due by then. A replay places the recorded events the same way (after the
/// terminal's timers of their instant, with the condition checked in between), so a run and its replay
/// do the same things in the same order.
final class Inbox: Scheduler, Sendable {
  private let clock: VirtualClock
  private struct State {
    var waiting: [@Sendable () -> Void] = []
    /// The latest instant at which work ran (BlueZ's delivered or the terminal's), or `.zero`.
    var settled: Duration = .zero
  }

  private let state = Locked(State())

  init(clock: VirtualClock) { self.clock = clock }

  var isCurrent: Bool { clock.isCurrent }
  var elapsed: Duration { clock.elapsed }
  var epoch: Date { clock.epoch }
  var isDeterministic: Bool { clock.isDeterministic }

  @discardableResult
  func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
    if delay > .zero {
      return clock.schedule(after: delay) { [self] in state.withLock { $0.waiting.append(work) } }
    }
    // Work for now from the terminal's own work (a command's deferred answer) stays with it.
    if clock.isCurrent { return clock.schedule(after: .zero, work) }
    state.withLock { $0.waiting.append(work) }
    return ScheduledWork(id: .max, deadline: clock.elapsed)
  }

  func cancel(_ work: ScheduledWork) {
    if work.id != .max { clock.cancel(work) }
  }

  func performBlocking<T: Sendable>(
    _ work: @escaping @Sendable () -> T, then deliver: @escaping @Sendable (T) -> Void
  ) {
    clock.performBlocking(work, then: deliver)
  }

  /// Runs the clock in step with `wall` (the wall clock's time on the clock's time line, read again on
  /// each turn) until `condition` holds (checked after each instant), `stop` says so, or the clock
  /// reaches `end`; calls `idle` when nothing is due yet. Returns whether `condition` holds.
  ///
  /// The order of an instant, which a replay (`ReplayingTransport.run(until:limit:)`) follows too: the
  /// terminal's work due at or before it first, then `condition`, then BlueZ's work waiting in the
  /// inbox. What waited lands at the wall clock's instant, and never at one where work of the
  /// terminal's ran already: on a machine too busy to keep up, BlueZ's work that waited while the
  /// terminal's timers ran late lands after them, at an instant of its own, rather than at a timer's
  /// instant where the replay could not tell it from the timer's own work.
  func drive(
    until condition: () -> Bool, end: Duration, stop: () -> Bool, wall: () -> Duration, idle: () -> Void
  ) -> Bool {
    while !condition(), !stop() {
      let now = min(wall(), end)
      if let next = clock.nextDeadline, next <= now {
        clock.advance(to: max(next, clock.elapsed))
        state.withLock { $0.settled = clock.elapsed }
        continue
      }
      if now > clock.elapsed { clock.advance(to: now) }
      if state.withLock({ $0.settled }) < clock.elapsed, deliver() { continue }
      if clock.elapsed >= end { break }
      idle()
    }
    return condition()
  }

  /// Runs what waits, in order, at the clock's current instant (and what that work schedules for
  /// now); returns whether anything waited.
  @discardableResult
  func deliver() -> Bool {
    let work = state.withLock { state in
      defer { state.waiting = [] }
      return state.waiting
    }
    guard !work.isEmpty else { return false }
    for item in work { clock.execute(item) }
    clock.runUntilIdle()
    state.withLock { $0.settled = clock.elapsed }
    return true
  }
}
