#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The locks that guard what a system's sessions share between the app's threads and the engine: a
/// fixed set of locks for all of them, a session taking the one its identifier picks.
///
/// A lock of its own would cost every session a heap block (the mutex and its value), which a session
/// waiting in line pays for nothing; sessions that happen to share a lock only ever hold it for a few
/// instructions, and never while calling out (a delegate, an observer, another session). The one call
/// made under it, handing work to the system's scheduler, only queues the work, so no lock is taken
/// under another session's.
///
/// The locks are POSIX mutexes, as `Locked`'s are (so ThreadSanitizer sees the ordering they make),
/// side by side in one block allocated once; taking one is a direct call at every use, which
/// matters here: a session takes its lock at each of its steps.
final class SessionLocks: @unchecked Sendable {
  /// `count` mutexes; their addresses never change, and none is ever held when the block is freed.
  private let mutexes: UnsafeMutablePointer<pthread_mutex_t>
  private let count: UInt64

  /// `count` locks (at least one).
  init(count: Int = 64) {
    let count = max(1, count)
    self.count = UInt64(count)
    mutexes = .allocate(capacity: count)
    mutexes.initialize(repeating: pthread_mutex_t(), count: count)
    // Default (normal, non-recursive) mutexes: no attributes to set, and they cannot fail here.
    for index in 0..<count { pthread_mutex_init(mutexes + index, nil) }
  }

  deinit {
    for index in 0..<Int(count) { pthread_mutex_destroy(mutexes + index) }
    mutexes.deinitialize(count: Int(count))
    mutexes.deallocate()
  }

  /// Runs `body` holding the lock of session `id`; `body` must not take a session's lock.
  @inline(__always)
  func withLock<Result>(for id: UInt64, _ body: () -> Result) -> Result {
    Self.withLock(mutex(for: id), body)
  }

  /// The lock of session `id`, good while these locks are (for a session: while it lives, since it holds
  /// its system, which holds them).
  @inline(__always)
  func mutex(for id: UInt64) -> UnsafeMutablePointer<pthread_mutex_t> {
    mutexes + Int(truncatingIfNeeded: id % count)
  }

  /// Runs `body` holding `mutex`, one of these locks; `body` must not take a session's lock. Static, so a
  /// caller that has the lock holds no reference to the locks' object across `body`.
  @inline(__always)
  static func withLock<Result>(_ mutex: UnsafeMutablePointer<pthread_mutex_t>, _ body: () -> Result) -> Result {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return body()
  }
}
