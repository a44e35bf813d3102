import Dispatch
import ReaderCore
import ReaderKit
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Ctrl-C for the simulation loops and the catalog fetches: the first SIGINT sets a flag the loops check
/// between steps, so a command can stop its operation cleanly (cancel it, print what it has) instead of
/// dying mid-line, and cancels `cancellation`, which wakes a fetch blocked on a server at once. A
/// second SIGINT ends the process with status 130 whatever it is doing.
enum Interrupt {
  private static let flag = Atomic<Bool>(false)
  private static let source = Locked<(any DispatchSourceSignal)?>(nil)

  /// Cancelled by the first Ctrl-C: give it to every blocking catalog call.
  static let cancellation = CatalogCancellation()

  /// Whether Ctrl-C was pressed since `install()`.
  static var requested: Bool { flag.load(ordering: .relaxed) }

  /// Starts catching SIGINT (idempotent).
  static func install() {
    source.withLock { source in
      guard source == nil else { return }
      source = SignalWatch.start(SIGINT) {
        if flag.exchange(true, ordering: .relaxed) { _exit(ExitStatus.interrupted) }
        cancellation.cancel()
      }
    }
  }
}

/// Signal handling through Dispatch: the handler runs on a global queue, never inside the signal.
enum SignalWatch {
  /// Stops `signal`'s default action and runs `handler` each time it arrives; keep the source. Call it
  /// on the main thread: from then on the signal is never lost, even if it arrives at once.
  ///
  /// Dispatch arms the source later, on a thread of its own; until then an ignored signal that is not
  /// blocked is discarded by the kernel (a Ctrl-C right after `install()` did nothing). Blocked on the
  /// main thread, which a signal sent to the process targets, it stays pending until the source reads
  /// it. Dispatch's own threads block it already.
  static func start(_ signal: Int32, handler: @escaping @Sendable () -> Void) -> any DispatchSourceSignal {
    var blocked = sigset_t()
    sigemptyset(&blocked)
    sigaddset(&blocked, signal)
    pthread_sigmask(SIG_BLOCK, &blocked, nil)
    #if canImport(Glibc)
      _ = Glibc.signal(signal, SIG_IGN)
    #else
      _ = Darwin.signal(signal, SIG_IGN)
    #endif
    let source = DispatchSource.makeSignalSource(signal: signal, queue: .global())
    source.setEventHandler(handler: handler)
    source.resume()
    return source
  }
}
