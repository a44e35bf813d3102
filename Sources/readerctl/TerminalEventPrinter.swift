import ReaderCore
import ReaderKit

/// Prints every event a terminal publishes as one JSON line (`--json`), its time counted from the
/// session's start, until told to stop; for the simulated and the BlueZ sessions alike.
final class TerminalEventPrinter: Sendable {
  private let console: Console
  private let origin: Duration
  /// The observer printing each terminal's events.
  private let tokens = Locked<[ObjectIdentifier: UInt64]>([:])

  /// A printer to `console` of times since `origin` on the session's clock.
  init(console: Console, origin: Duration) {
    self.console = console
    self.origin = origin
  }

  /// Prints `terminal`'s events from now on.
  func start(_ terminal: Terminal) {
    let (console, origin) = (self.console, self.origin)
    let token = terminal.addEventObserver { event in console.line(event.json(since: origin).rendered) }
    tokens.withLock { $0[ObjectIdentifier(terminal)] = token }
  }

  /// Stops printing `terminal`'s events (nothing when they were not printed).
  func stop(_ terminal: Terminal) {
    if let token = tokens.withLock({ $0.removeValue(forKey: ObjectIdentifier(terminal)) }) {
      terminal.removeEventObserver(token)
    }
  }
}
