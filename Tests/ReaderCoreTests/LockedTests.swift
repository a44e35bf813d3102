import Foundation
import Synchronization
import Testing

@testable import ReaderCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs `body(index)` on `count` threads of their own at once and returns when all have ended (joined,
/// so that ThreadSanitizer sees every thread's work happen before the return).
private func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
  final class Work {
    let body: @Sendable (Int) -> Void
    let index: Int
    init(_ body: @escaping @Sendable (Int) -> Void, _ index: Int) {
      self.body = body
      self.index = index
    }
  }
  #if canImport(Darwin)
    var threads: [pthread_t?] = []
  #else
    var threads: [pthread_t] = []
  #endif
  for index in 0..<count {
    let context = Unmanaged.passRetained(Work(body, index)).toOpaque()
    #if canImport(Darwin)
      var thread: pthread_t?
    #else
      var thread = pthread_t()
    #endif
    let created = pthread_create(
      &thread, nil,
      { context in
        let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
        work.body(work.index)
        return nil
      }, context)
    #expect(created == 0)
    threads.append(thread)
  }
  #if canImport(Darwin)
    for thread in threads { if let thread { pthread_join(thread, nil) } }
  #else
    for thread in threads { pthread_join(thread, nil) }
  #endif
}

/// A value that counts its deinitializations and cannot be copied.
private struct Token: ~Copyable {
  let dropped: Counter
  deinit { dropped.value.withLock { $0 += 1 } }
}

private final class Counter: Sendable {
  let value = Mutex(0)
}

/// An integer that any thread changes with no lock at all: the deliberate race of the control.
private final class Unguarded: @unchecked Sendable {
  var value = 0
}

@Suite struct LockedTests {
  @Test func incrementsFromManyThreadsAreNeverLost() {
    let count = Locked(0)
    let threads = 4
    let rounds = 20_000
    onThreads(threads) { _ in
      for _ in 0..<rounds { count.withLock { $0 += 1 } }
    }
    #expect(count.withLock { $0 } == threads * rounds)
  }

  @Test func withLockReturnsWhatTheBodyReturnsAndRethrowsItsTypedError() {
    struct Refused: Error, Equatable { let code: Int }
    let names = Locked<[String]>(["a"])
    let count = names.withLock { names in
      names.append("b")
      return names.count
    }
    #expect(count == 2)
    #expect(throws: Refused(code: 7)) {
      try names.withLock { (names) throws(Refused) -> Void in
        names.append("c")
        throw Refused(code: 7)
      }
    }
    // The change made before the throw stays, and the lock was released (or this would never return).
    #expect(names.withLock { $0 } == ["a", "b", "c"])
  }

  @Test func withLockIfAvailableGivesNilWhileAnotherThreadHoldsTheLock() {
    let value = Locked(1)
    #expect(value.withLockIfAvailable { $0 } == 1)
    let seen = Locked<Int??>(nil)
    value.withLock { _ in
      onThreads(1) { _ in
        let result = value.withLockIfAvailable { $0 }
        seen.withLock { $0 = .some(result) }
      }
    }
    #expect(seen.withLock { $0 } == .some(nil))
  }

  @Test func aValueThatCannotBeCopiedIsHeldAndDroppedOnceWithTheLock() {
    let dropped = Counter()
    do {
      let token = Locked(Token(dropped: dropped))
      #expect(token.withLock { $0.dropped === dropped })
      #expect(dropped.value.withLock { $0 } == 0)
    }
    #expect(dropped.value.withLock { $0 } == 1)
  }

  @Test func valuesOfEveryAlignmentSitAfterTheMutex() {
    let byte = Locked<UInt8>(0xA5)
    let wide = Locked<SIMD4<Double>>(SIMD4(1, 2, 3, 4))
    let empty = Locked(())
    #expect(byte.withLock { $0 } == 0xA5)
    #expect(wide.withLock { $0.w } == 4)
    empty.withLock { _ in }
  }

  /// The control that `.ci/tsan.sh` runs under ThreadSanitizer, with `READERKIT_TSAN_CONTROL` set:
  /// two threads add to one integer, `unguarded` with no lock (a race TSan must report), `locked` through
  /// `Locked` (TSan must stay silent) or `mutex` through `Synchronization.Mutex` (which TSan on Linux
  /// cannot see: it reports the correct program too). Skipped in ordinary runs.
  @Test(.enabled(if: ProcessInfo.processInfo.environment["READERKIT_TSAN_CONTROL"] != nil))
  func threadSanitizerControl() throws {
    let mode = ProcessInfo.processInfo.environment["READERKIT_TSAN_CONTROL"] ?? ""
    let rounds = 10_000
    // Both threads start adding only once both run: ThreadSanitizer can miss a race with a thread that
    // has already ended (its slot is reused), so the two must overlap for the control to be certain.
    let started = Atomic(0)
    let together = { @Sendable in
      started.add(1, ordering: .relaxed)
      while started.load(ordering: .relaxed) < 2 {}
    }
    switch mode {
    case "unguarded":
      let value = Unguarded()
      onThreads(2) { _ in
        together()
        for _ in 0..<rounds { value.value += 1 }
      }
    case "locked":
      let value = Locked(0)
      onThreads(2) { _ in
        together()
        for _ in 0..<rounds { value.withLock { $0 += 1 } }
      }
      #expect(value.withLock { $0 } == 2 * rounds)
    case "mutex":
      let value = Mutex(0)
      onThreads(2) { _ in
        together()
        for _ in 0..<rounds { value.withLock { $0 += 1 } }
      }
      #expect(value.withLock { $0 } == 2 * rounds)
    default:
      Issue.record("READERKIT_TSAN_CONTROL is \(mode): expected unguarded, locked or mutex")
    }
  }
}
