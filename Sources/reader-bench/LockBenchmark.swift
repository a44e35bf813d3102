import Foundation
import ReaderCore
import Synchronization

/// Benchmarks `Locked` (the POSIX mutex the package guards its state with, which ThreadSanitizer sees)
/// against `Synchronization.Mutex`, doing the same work in the same round (see `Comparison`); the counts
/// are checked.
///
/// - `uncontended`: `operations` increments of a guarded integer through `withLock`, on one thread.
/// - `contended`: the same number split between two threads taking the one lock in turns (wall time).
/// - `create`: `objects` objects holding one guarded value, created, used once and released (the
///   allocation `Locked` adds: its mutex and value sit in a heap block of their own).
func runLockBenchmark(operations: Int, objects: Int) -> [Ratio] {
  let count = max(2, operations) / 2 * 2
  let timings = Comparison([
    .withSetUp("lock.uncontended.locked") {
      let box = LockedBox()
      return ({ for _ in 0..<count { box.value.withLock { $0 += 1 } } }, { box.expect(count) })
    },
    .withSetUp("lock.uncontended.mutex") {
      let box = MutexBox()
      return ({ for _ in 0..<count { box.value.withLock { $0 += 1 } } }, { box.expect(count) })
    },
    .withSetUp("lock.contended.locked") {
      let box = LockedBox()
      return ({ onTwoThreads { for _ in 0..<count / 2 { box.value.withLock { $0 += 1 } } } }, { box.expect(count) })
    },
    .withSetUp("lock.contended.mutex") {
      let box = MutexBox()
      return ({ onTwoThreads { for _ in 0..<count / 2 { box.value.withLock { $0 += 1 } } } }, { box.expect(count) })
    },
    .init("lock.create.locked") {
      var sum = 0
      for index in 0..<objects { sum += LockedBox(index).value.withLock { $0 } }
      precondition(sum == objects * (objects - 1) / 2, "every object held its value")
    },
    .init("lock.create.mutex") {
      var sum = 0
      for index in 0..<objects { sum += MutexBox(index).value.withLock { $0 } }
      precondition(sum == objects * (objects - 1) / 2, "every object held its value")
    },
  ]).measure()

  let ratios = [
    timings.ratio(
      "lock.uncontended: Locked / Mutex", "lock.uncontended.locked", over: "lock.uncontended.mutex", clock: .cpu),
    timings.ratio("lock.contended: Locked / Mutex", "lock.contended.locked", over: "lock.contended.mutex"),
    timings.ratio("lock.create: Locked / Mutex", "lock.create.locked", over: "lock.create.mutex", clock: .cpu),
  ]
  let nanoseconds = { (name: String, per: Int, clock: Timings.Clock) in
    String(format: "%.1f", timings.median(name, clock) / Double(per) * 1e9)
  }
  print(
    """
    Lock benchmark: \(BenchOptions.current.rounds) rounds; Locked (a POSIX mutex) against Synchronization.Mutex \
    (cost ratios: below 1 is cheaper)
      uncontended: \(count) increments on one thread, \(nanoseconds("lock.uncontended.locked", count, .cpu)) ns \
    against \(nanoseconds("lock.uncontended.mutex", count, .cpu)) ns each (CPU time, medians)
      contended: the same split between two threads, \(nanoseconds("lock.contended.locked", count, .wall)) ns \
    against \(nanoseconds("lock.contended.mutex", count, .wall)) ns each (wall time)
      create: \(objects) objects holding a guarded value made, used once and released, \
    \(nanoseconds("lock.create.locked", objects, .cpu)) ns against \(nanoseconds("lock.create.mutex", objects, .cpu)) \
    ns each
    """)
  print(ratios.map(\.line).joined(separator: "\n"))
  return ratios
}

/// An integer behind `Locked`, in an object as the package holds its locks.
private final class LockedBox: Sendable {
  let value: Locked<Int>
  init(_ value: Int = 0) { self.value = Locked(value) }
  func expect(_ count: Int) { precondition(value.withLock { $0 } == count, "no increment lost") }
}

/// An integer behind `Mutex`, in an object as the package held its locks.
private final class MutexBox: Sendable {
  let value: Mutex<Int>
  init(_ value: Int = 0) { self.value = Mutex(value) }
  func expect(_ count: Int) { precondition(value.withLock { $0 } == count, "no increment lost") }
}

/// Runs `body` on two threads at once and returns when both have ended.
private func onTwoThreads(_ body: @escaping @Sendable () -> Void) {
  let ended = DispatchGroup()
  for _ in 0..<2 {
    ended.enter()
    Thread {
      body()
      ended.leave()
    }.start()
  }
  ended.wait()
}
