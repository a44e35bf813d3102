import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Ctrl-C for the simulation loops: the first SIGINT sets a flag the loops check between steps, so a
/// command can stop its operation cleanly (cancel it, print what it has) instead of dying mid-line.
enum Interrupt {
  private static let flag = Atomic<Bool>(false)
  private static let source = Mutex<(any DispatchSourceSignal)?>(nil)

  /// Whether Ctrl-C was pressed since `install()`.
  static var requested: Bool { flag.load(ordering: .relaxed) }

  /// Starts catching SIGINT (idempotent).
  static func install() {
    source.withLock { source in
      guard source == nil else { return }
      signal(SIGINT, SIG_IGN)
      let signalSource = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
      signalSource.setEventHandler { flag.store(true, ordering: .relaxed) }
      signalSource.resume()
      source = signalSource
    }
  }
}
