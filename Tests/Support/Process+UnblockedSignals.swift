import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension Process {
  /// Starts the process with no signal blocked, and throws what `run()` throws.
  ///
  /// A spawned child inherits the signal mask of the thread that spawns it, and a test runner's
  /// threads may block SIGTERM, SIGINT and SIGHUP: a helper started with such a mask ignores
  /// `terminate()` and the signals a test sends it. The calling thread's mask is cleared around the
  /// spawn and restored after it, whether or not the spawn succeeds. (Foundation's `Process` on Swift
  /// 6.3 for Linux already gives the child an empty mask; this keeps it so where `Process` does not.)
  public func runWithSignalsUnblocked() throws {
    var empty = sigset_t()
    var previous = sigset_t()
    sigemptyset(&empty)
    pthread_sigmask(SIG_SETMASK, &empty, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    try run()
  }
}
