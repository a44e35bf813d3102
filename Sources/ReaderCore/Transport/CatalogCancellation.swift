
/// A request to stop update catalog fetches, shared by whoever starts them and whoever may stop them:
/// a task's cancellation, a `Cancelable`, Ctrl-C in a command-line tool.
///
/// Pass it to `UpdateCatalog.availableUpdate(for:at:cancellation:)` or
/// `firmwareImage(for:cancellation:)`. Once `cancel()` is called it stays cancelled: a fetch given it
/// stops within moments — `HTTPUpdateCatalog` wakes its blocked connect or read at once, closes its
/// socket and throws `canceled` — and a fetch started afterwards throws `canceled` before it begins.
/// One cancellation may be shared by any number of fetches, on any threads.
///
/// ```swift
/// let stop = CatalogCancellation()
/// // on another thread, e.g. when the user leaves the screen:
/// stop.cancel()
/// // the fetch blocked in this one throws `canceled`:
/// let answer = try catalog.availableUpdate(for: installed, at: Date(), cancellation: stop)
/// ```
public final class CatalogCancellation: Sendable {
  private struct State {
    var cancelled = false
    var nextToken: UInt64 = 0
    var handlers: [UInt64: @Sendable () -> Void] = [:]
  }

  private let state = Locked(State())

  /// A cancellation that has not been requested yet.
  public init() {}

  /// Whether `cancel()` was called.
  public var isCancelled: Bool { state.withLock { $0.cancelled } }

  /// Stops every fetch given this cancellation, now and later; idempotent.
  public func cancel() {
    state.withLock { state in
      guard !state.cancelled else { return }
      state.cancelled = true
      // Run under the lock, so that `removeHandler` returning means no handler runs any more and what
      // it used (a wake-up pipe) can be closed. Handlers are a write to a pipe or a semaphore signal.
      for handler in state.handlers.values { handler() }
      state.handlers = [:]
    }
  }

  /// Runs `handler` when the cancellation is requested (at once, on this thread, if it was already);
  /// returns a token for `removeHandler(_:)`, or `nil` when the handler already ran. The handler runs
  /// under the cancellation's lock: it must be short and must not call back into the cancellation.
  package func onCancel(_ handler: @escaping @Sendable () -> Void) -> UInt64? {
    state.withLock { state in
      guard !state.cancelled else {
        handler()
        return nil
      }
      state.nextToken += 1
      state.handlers[state.nextToken] = handler
      return state.nextToken
    }
  }

  /// Forgets the handler `token` names; once this returns, the handler is not running and never will.
  package func removeHandler(_ token: UInt64?) {
    guard let token else { return }
    _ = state.withLock { $0.handlers.removeValue(forKey: token) }
  }
}
