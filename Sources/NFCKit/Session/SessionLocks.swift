internal import ReaderCore

/// The locks that guard what a system's sessions share between the app's threads and the engine: a
/// fixed set of locks for all of them, a session taking the one its identifier picks.
///
/// A lock of its own would cost every session a heap block (the mutex and its value), which a session
/// waiting in line pays for nothing; sessions that happen to share a lock only ever hold it for a few
/// instructions, and never while calling out (a delegate, an observer, another session). The one call
/// made under it, handing work to the system's scheduler, only queues the work, so no lock is taken
/// under another session's.
final class SessionLocks: Sendable {
  private final class Stripe: Sendable {
    let lock = Locked<Void>(())
  }

  private let stripes: [Stripe]

  /// `count` locks (at least one).
  init(count: Int = 64) {
    stripes = (0..<max(1, count)).map { _ in Stripe() }
  }

  /// Runs `body` holding the lock of session `id`.
  func withLock<Result: Sendable>(for id: UInt64, _ body: () -> Result) -> Result {
    stripes[Int(id % UInt64(stripes.count))].lock.withLock { _ in body() }
  }
}
