import ReaderCore

/// What `Cancelable.cancel()` found, in the async form.
public enum CancelResult: String, Sendable, Hashable {
  /// The operation was stopped (by this call or an earlier one) and completed with `canceled`.
  case canceled
  /// The operation had already completed on its own; nothing was cancelled.
  case nothingToCancel
}

/// A handle on a long operation (discovery, connect, reconnection, launch reconnect, an install), as
/// Stripe's `Cancelable`.
///
/// `cancel` is idempotent and completes only once the operation has really stopped: the operation's
/// own completion (with `canceled`) runs first, then the cancel's. So starting a new discovery in
/// the cancel completion always works:
///
/// ```swift
/// discovery.cancel { error in
///   if let error { print("nothing to cancel:", error) }  // cancelFailedAlreadyCompleted
///   terminal.discoverReaders(config, delegate: self) { _ in }
/// }
/// ```
public final class Cancelable: Sendable {
  private enum Phase {
    /// The operation runs.
    case running
    /// Cancel was requested; these waiters hear when the operation has stopped.
    case canceling([@Sendable (CancelResult) -> Void])
    /// The operation completed; `canceled` says whether cancellation ended it.
    case completed(canceled: Bool)
  }

  private let phase = Locked(Phase.running)
  private let onCancel: @Sendable (Cancelable) -> Void

  /// `onCancel` is asked to stop the operation; it runs on the terminal's scheduler.
  convenience init(onCancel: @escaping @Sendable () -> Void) {
    self.init(onCancelOf: { _ in onCancel() })
  }

  /// `onCancelOf` is asked to stop the operation and is told which handle asks, so a driver that
  /// reuses one slot for successive operations can ignore a handle of one that has ended.
  init(onCancelOf onCancel: @escaping @Sendable (Cancelable) -> Void) {
    self.onCancel = onCancel
  }

  /// Whether the operation has completed (on its own or by cancellation): Stripe's `completed`.
  public var completed: Bool {
    phase.withLock {
      if case .completed = $0 { return true }
      return false
    }
  }

  /// Whether the operation has completed; the same as `completed`.
  public var isCompleted: Bool { completed }

  /// Asks the operation to stop, as Stripe's `cancel(_:)`: `completion` runs once it has stopped, on
  /// the terminal's `DelegateExecutor` (or at once, on the caller's thread, when the operation had
  /// already completed). Every call gets its own completion.
  ///
  /// - Parameter completion: `nil` when the operation was cancelled (by this call or an earlier one);
  ///   a `ReaderError` with code `cancelFailedAlreadyCompleted` when it had completed on its own first,
  ///   so there was nothing to cancel.
  public func cancel(_ completion: @escaping @Sendable ((any Error)?) -> Void = { _ in }) {
    request { result in
      switch result {
      case .canceled: completion(nil)
      case .nothingToCancel:
        completion(
          ReaderError(
            .cancelFailedAlreadyCompleted, "the operation had already completed; there was nothing to cancel"))
      }
    }
  }

  /// Asks the operation to stop and waits until it has; says whether it was cancelled or had already
  /// completed on its own.
  @discardableResult
  public func cancel() async -> CancelResult {
    await withCheckedContinuation { continuation in
      request { continuation.resume(returning: $0) }
    }
  }

  /// Asks the operation to stop; `answer` hears how it ended.
  private func request(_ answer: @escaping @Sendable (CancelResult) -> Void) {
    enum Step { case request, wait, answer(CancelResult) }
    let step = phase.withLock { phase -> Step in
      switch phase {
      case .running:
        phase = .canceling([answer])
        return .request
      case .canceling(let waiters):
        phase = .canceling(waiters + [answer])
        return .wait
      case .completed(let canceled):
        return .answer(canceled ? .canceled : .nothingToCancel)
      }
    }
    switch step {
    case .request: onCancel(self)
    case .wait: break
    case .answer(let result): answer(result)
    }
  }

  /// Called by the terminal right after the operation's own completion ran.
  func finish(canceled: Bool) {
    let waiters = phase.withLock { phase -> [@Sendable (CancelResult) -> Void] in
      guard case .canceling(let waiters) = phase else {
        if case .running = phase { phase = .completed(canceled: canceled) }
        return []
      }
      phase = .completed(canceled: canceled)
      return waiters
    }
    for waiter in waiters { waiter(canceled ? .canceled : .nothingToCancel) }
  }
}
