import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A counting semaphore for the threads that run child processes: `withPermit` blocks its thread (one
/// of its own, never a thread of the cooperative pool) until one of `width` permits is free. Tests wait
/// for their children off the pool and so no longer take turns on its threads; this keeps them from
/// starting a hundred children on two cores at once (each would then take many times its usual time).
/// A permit passes from thread to thread without waiting for the pool, however busy it is.
public final class ChildProcessGate: Sendable {
  /// The gate the `readerctl` runs share: as many children at once as the machine has cores.
  public static let shared = ChildProcessGate(width: max(2, ProcessInfo.processInfo.activeProcessorCount))

  /// The limit of every child started after one of this gate's children was killed at its own limit.
  public static let limitAfterAnOverrun = Duration.seconds(3)
  /// The time between SIGTERM and SIGKILL for a child killed at its limit after such an overrun.
  public static let graceAfterAnOverrun = Duration.milliseconds(500)

  private let permits: DispatchSemaphore
  /// The first child killed at its limit, by command line.
  private let firstOverrun = Mutex<String?>(nil)

  public init(width: Int) { permits = DispatchSemaphore(value: width) }

  /// The time limit of a child started now that asks for `requested`: `requested`, or at most
  /// `limitAfterAnOverrun` once a child of this gate has been killed at its limit (`noteOverrun`), so a
  /// build whose children all hang fails each of its tests within seconds rather than a minute apiece,
  /// two at a time. A child that ends within the short limit still passes its test.
  public func limit(_ requested: Duration) -> (limit: Duration, shortenedBecause: String?) {
    guard let overrun = firstOverrun.withLock({ $0 }), requested > Self.limitAfterAnOverrun else {
      return (requested, nil)
    }
    return (Self.limitAfterAnOverrun, "shortened from \(requested): \(overrun) was killed at its limit earlier")
  }

  /// The time a child killed at its limit gets between SIGTERM and SIGKILL: `requested`, or at most
  /// `graceAfterAnOverrun` once a child of this gate has been killed at its limit (a build whose children
  /// hang and ignore SIGTERM would otherwise spend that grace on every test).
  public func grace(_ requested: Duration = .seconds(2)) -> Duration {
    firstOverrun.withLock { $0 } == nil ? requested : min(requested, Self.graceAfterAnOverrun)
  }

  /// Notes that `command`, a child that took a turn here, was killed at its time limit: the children
  /// started after it get `limitAfterAnOverrun`.
  public func noteOverrun(of command: String) {
    firstOverrun.withLock { if $0 == nil { $0 = command } }
  }

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

  /// `withTurn` for a body that starts one child and waits for it: cancelling the calling task (a time
  /// limit that ran out) kills that child with SIGKILL, so the wait ends now rather than at the child's own
  /// limit, and this throws `CancellationError`. `body` hands its started child to the `CancellableChild`.
  public func withTurn<Value: Sendable>(
    killedOnCancel body: @escaping @Sendable (CancellableChild) throws -> Value
  ) async throws -> Value {
    let child = CancellableChild()
    let value = try await withTaskCancellationHandler {
      try await withTurn { try body(child) }
    } onCancel: {
      child.cancel()
    }
    if child.wasCancelled { throw CancellationError() }
    return value
  }
}

/// The child of a `withTurn(killedOnCancel:)`: killed when the waiting task is cancelled, whether that
/// comes before or after it starts.
public final class CancellableChild: Sendable {
  private enum State {
    case notStarted
    case running(pid_t)
    case ended
    case cancelled
  }

  private let state = Mutex(State.notStarted)

  /// Whether the task waiting for the child was cancelled.
  public var wasCancelled: Bool {
    state.withLock { if case .cancelled = $0 { true } else { false } }
  }

  /// Notes the started child; kills it at once when the task was cancelled before it started.
  public func started(_ process: Process) {
    let pid = process.processIdentifier
    let cancelled = state.withLock { state -> Bool in
      if case .cancelled = state { return true }
      state = .running(pid)
      return false
    }
    if cancelled { kill(pid, SIGKILL) }
  }

  /// Notes that the child has ended and was waited for: its process ID may be reused, so it is not
  /// signalled any more.
  public func ended() {
    state.withLock { if case .running = $0 { $0 = .ended } }
  }

  fileprivate func cancel() {
    let pid = state.withLock { state -> pid_t? in
      defer { state = .cancelled }
      if case .running(let pid) = state { return pid }
      return nil
    }
    if let pid { kill(pid, SIGKILL) }
  }
}
