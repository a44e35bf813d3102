import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension Process {
  /// Starts the process with no signal blocked, and throws what `run()` throws.
  ///
  /// The test runner's threads block SIGTERM, SIGINT and SIGHUP, and a spawned child inherits the
  /// mask of the thread that spawns it: a helper started with plain `run()` ignores `terminate()` and
  /// the signals a test sends it. The calling thread's mask is cleared around the spawn and restored
  /// after it, whether or not the spawn succeeds.
  public func runWithSignalsUnblocked() throws {
    var empty = sigset_t()
    var previous = sigset_t()
    sigemptyset(&empty)
    pthread_sigmask(SIG_SETMASK, &empty, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    try run()
  }
}
