import Synchronization

// Waits that a test's time limit can end. Swift Testing's `.timeLimit` cancels the test's task; a
// continuation nobody resumes, or the value of an unstructured task (which does not inherit the
// cancellation), would keep the test waiting for ever: the test would hang instead of failing.

extension Task where Failure == Never {
  /// The task's value; cancelling the waiting task cancels this one too, so that a test's time limit
  /// ends the wait (the task must itself end on cancellation, as a `for await` over a stream does).
  public var valueCancelledWithCaller: Success {
    get async { await withTaskCancellationHandler { await value } onCancel: { cancel() } }
  }
}

extension Task where Failure == any Error {
  /// The task's value or error; cancelling the waiting task cancels this one too (see above).
  public var valueCancelledWithCaller: Success {
    get async throws { try await withTaskCancellationHandler { try await value } onCancel: { cancel() } }
  }
}

/// Waits until `start` calls the function it is given (later calls are ignored) and returns what it was
/// called with; when the waiting task is cancelled first (a test's time limit), returns `cancelled`.
/// `start` runs at once, on the caller's actor.
public func awaitCallback<Value: Sendable>(
  isolation: isolated (any Actor)? = #isolation, cancelled: Value,
  _ start: (@escaping @Sendable (Value) -> Void) -> Void
) async -> Value {
  let once = CallbackOnce<Value>()
  return await withTaskCancellationHandler {
    await withCheckedContinuation(isolation: isolation) { continuation in
      once.install(continuation)
      start { once.resume(returning: $0) }
    }
  } onCancel: {
    once.resume(returning: cancelled)
  }
}

/// One continuation resumed exactly once, by whichever of the callback and the cancellation comes first.
private final class CallbackOnce<Value: Sendable>: Sendable {
  private enum Phase {
    case waiting
    case installed(CheckedContinuation<Value, Never>)
    case resolved(Value)
    case done
  }

  private let phase = Mutex(Phase.waiting)

  func install(_ continuation: CheckedContinuation<Value, Never>) {
    let early = phase.withLock { phase -> Value? in
      if case .resolved(let value) = phase {
        phase = .done
        return value
      }
      phase = .installed(continuation)
      return nil
    }
    if let early { continuation.resume(returning: early) }
  }

  func resume(returning value: Value) {
    let waiting = phase.withLock { phase -> CheckedContinuation<Value, Never>? in
      switch phase {
      case .waiting:
        phase = .resolved(value)
        return nil
      case .installed(let continuation):
        phase = .done
        return continuation
      case .resolved, .done:
        return nil
      }
    }
    waiting?.resume(returning: value)
  }
}
