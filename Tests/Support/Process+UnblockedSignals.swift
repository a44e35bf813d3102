import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension Process {
  /// util-linux's `setpriv`: children start through it (`--pdeathsig`), and the tests that must meet file
  /// permissions as root run a child through it as `nobody`.
  public static let setpriv = "/usr/bin/setpriv"

  /// Starts the process with no signal blocked and, on Linux, bound to die with the test process;
  /// throws what `run()` throws.
  ///
  /// A spawned child inherits the signal mask of the thread that spawns it, and a test runner's
  /// threads may block SIGTERM, SIGINT and SIGHUP: a helper started with such a mask ignores
  /// `terminate()` and the signals a test sends it. The spawning thread's mask is empty. (Foundation's
  /// `Process` on Swift 6.3 for Linux already gives the child an empty mask; this keeps it so where
  /// `Process` does not.)
  ///
  /// A test run killed from outside (a time limit, a crash) never reaches the teardown that stops its
  /// helpers, and `Process` puts each child in a process group of its own, out of reach of a signal to
  /// the run's group: a spinning `readerctl` or a `dbus-daemon` would outlive the run. So on Linux the
  /// child starts through `setpriv --pdeathsig KILL` (util-linux), which asks the kernel to kill it
  /// when its parent goes. The kernel counts the thread that spawned it as its parent, and the pools
  /// retire idle threads; every child is therefore spawned by one thread that lives as long as the
  /// process (`ChildSpawner`).
  public func runWithSignalsUnblocked() throws {
    #if os(Linux)
      if let program = executableURL, FileManager.default.isExecutableFile(atPath: program.path),
        FileManager.default.isExecutableFile(atPath: Process.setpriv)
      {
        // Only a program that exists is wrapped: a missing one still makes `run()` throw.
        arguments = ["--pdeathsig", "KILL", "--", program.path] + (arguments ?? [])
        executableURL = URL(fileURLWithPath: Process.setpriv)
      }
      try ChildSpawner.shared.run(self)
    #else
      var empty = sigset_t()
      var previous = sigset_t()
      sigemptyset(&empty)
      pthread_sigmask(SIG_SETMASK, &empty, &previous)
      defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
      try run()
    #endif
  }
}

#if os(Linux)
  /// The one thread that starts the tests' children, alive as long as the process, with no signal
  /// blocked. Callers wait for their start; starts are taken one at a time, in order.
  final class ChildSpawner: @unchecked Sendable {
    static let shared = ChildSpawner()

    /// One start: the process, then what `run()` threw; `done` is signalled once it returned.
    private final class Start: @unchecked Sendable {
      let process: Process
      var error: (any Error)?
      let done = DispatchSemaphore(value: 0)
      init(_ process: Process) { self.process = process }
    }

    // `starts` is guarded by `condition`; a start's `error` is written by the spawner before `done`
    // is signalled and read by its caller after.
    private let condition = NSCondition()
    private var starts: [Start] = []

    private init() {
      let thread = Thread { [unowned self] in
        var empty = sigset_t()
        sigemptyset(&empty)
        pthread_sigmask(SIG_SETMASK, &empty, nil)
        while true {
          condition.lock()
          while starts.isEmpty { condition.wait() }
          let start = starts.removeFirst()
          condition.unlock()
          do { try start.process.run() } catch { start.error = error }
          start.done.signal()
        }
      }
      thread.name = "child-spawner"
      thread.start()
    }

    /// Starts `process` on the spawner's thread and returns once it started; throws what `run()` threw.
    func run(_ process: Process) throws {
      let start = Start(process)
      condition.lock()
      starts.append(start)
      condition.signal()
      condition.unlock()
      start.done.wait()
      if let error = start.error { throw error }
    }
  }
#endif
