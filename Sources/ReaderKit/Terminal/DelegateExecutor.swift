import Dispatch
import Foundation

/// Where a terminal runs delegate methods, completions and `Cancelable` waiters.
///
/// Either way they run one at a time, in the order of the event stream (`Terminal.events()`), and a
/// completion always runs before the waiters of its `Cancelable`.
public struct DelegateExecutor: Sendable {
  private let run: @Sendable (@escaping @MainActor @Sendable () -> Void) -> Void

  /// On the main actor, in order (as Stripe calls its delegates on the main queue): what a live app
  /// wants, since its delegates are view controllers. The main queue must be serviced (an app's run
  /// loop, `dispatchMain()`, or an async `main`). The status a callback reads may already be ahead of
  /// it: the terminal moves on while the main actor catches up.
  public static let mainActor = DelegateExecutor { body in
    DispatchQueue.main.async { MainActor.assumeIsolated { body() } }
  }

  /// Synchronously on the terminal's scheduler, interleaved with the event stream: deterministic,
  /// what simulations and tests on a `VirtualClock` want. Delegates then run on the thread that drives
  /// the clock: drive it from the main actor for `@MainActor` delegates, from anywhere for
  /// `nonisolated` ones.
  public static let scheduler = DelegateExecutor { body in
    if Thread.isMainThread {
      MainActor.assumeIsolated { body() }
    } else {
      // The delegate is `nonisolated` (documented above); the main actor is not involved.
      unsafeBitCast(body as @MainActor @Sendable () -> Void, to: (@Sendable () -> Void).self)()
    }
  }

  private init(run: @escaping @Sendable (@escaping @MainActor @Sendable () -> Void) -> Void) {
    self.run = run
  }

  /// Runs `body` on this executor.
  func callAsFunction(_ body: @escaping @MainActor @Sendable () -> Void) {
    run(body)
  }
}
