import Dispatch
import Foundation

/// A counting semaphore for the threads that run child processes: `withPermit` blocks its thread (one
/// of its own, never a thread of the cooperative pool) until one of `width` permits is free. Tests wait
/// for their children off the pool and so no longer take turns on its threads; this keeps them from
/// starting a hundred children on two cores at once (each would then take many times its usual time).
/// A permit passes from thread to thread without waiting for the pool, however busy it is.
public final class ChildProcessGate: Sendable {
  /// The gate the `readerctl` runs share: as many children at once as the machine has cores.
  public static let shared = ChildProcessGate(width: max(2, ProcessInfo.processInfo.activeProcessorCount))

  private let permits: DispatchSemaphore

  public init(width: Int) { permits = DispatchSemaphore(value: width) }

  /// Runs `body` holding a permit, and gives it back however `body` ends. Call it on a thread of its
  /// own (`offPool`). The wait for the permit counts as the test's work unless it is marked on `waits`
  /// (`withTurn` marks it on the calling test's).
  public func withPermit<Value>(markingOn waits: TurnWaits? = nil, _ body: () throws -> Value) rethrows -> Value {
    if let waits { waits.during { permits.wait() } } else { permits.wait() }
    defer { permits.signal() }
    return try body()
  }

  /// Runs `body` (which blocks: it starts a child and waits for it) on a thread of its own, holding a
  /// permit, and gives it back however `body` ends. The wait for the permit is marked on the calling
  /// test's `TurnWaits`, so a `WorkTimeLimit` does not count it: bound the child inside `body`.
  public func withTurn<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    let waits = TurnWaits.current
    return try await offPool { try self.withPermit(markingOn: waits, body) }
  }
}
