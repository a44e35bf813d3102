import ReaderCore

/// Values in order (an SMP transport's events, say), and waiters for one that satisfies a predicate,
/// woken without blocking a thread; a waiter gives up after its timeout on the given scheduler.
final class Recorder<Value: Sendable>: Sendable {
  private struct Waiter {
    let predicate: @Sendable (Value) -> Bool
    let continuation: CheckedContinuation<Value?, Never>
  }

  private struct State {
    var values: [Value] = []
    var waiters: [UInt64: Waiter] = [:]
    var next: UInt64 = 0
  }

  private let state = Locked(State())

  func append(_ value: Value) {
    let ready = state.withLock { state -> [Waiter] in
      state.values.append(value)
      let ids = state.waiters.filter { $0.value.predicate(value) }.map(\.key)
      return ids.compactMap { state.waiters.removeValue(forKey: $0) }
    }
    for waiter in ready { waiter.continuation.resume(returning: value) }
  }

  var values: [Value] { state.withLock { $0.values } }

  /// The first value from index `mark` on, recorded or to come, that satisfies `predicate`; nil after
  /// `timeout` on `scheduler`.
  func first(
    after mark: Int = 0, timeout: Duration = .seconds(8), scheduler: any Scheduler,
    where predicate: @escaping @Sendable (Value) -> Bool
  ) async -> Value? {
    await withCheckedContinuation { continuation in
      let id = state.withLock { state -> UInt64? in
        if let match = state.values.dropFirst(mark).first(where: predicate) {
          continuation.resume(returning: match)
          return nil
        }
        state.next += 1
        state.waiters[state.next] = Waiter(predicate: predicate, continuation: continuation)
        return state.next
      }
      guard let id else { return }
      scheduler.schedule(after: timeout) { [self] in
        state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
      }
    }
  }
}
