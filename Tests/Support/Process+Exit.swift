import Dispatch
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A child process that was still running at the end of the time it was given: it was sent SIGTERM,
/// then SIGKILL, and has ended.
public struct ChildProcessTimeout: Error, CustomStringConvertible {
  /// The child's command line, as `Process.commandLine` gives it.
  public let command: String
  /// The time it was given.
  public let limit: Duration

  public var description: String { "\(command) did not exit within \(limit) and was killed (SIGTERM, then SIGKILL)" }
}

extension Process {
  /// The child's executable and arguments, on one line, for messages.
  public var commandLine: String {
    var words = [executableURL?.lastPathComponent ?? "?"] + (arguments ?? [])
    // Started through `setpriv --pdeathsig KILL -- program` (`runWithSignalsUnblocked`): name the program.
    if words.first == "setpriv", let end = words.firstIndex(of: "--"), end + 1 < words.count {
      words = [URL(fileURLWithPath: words[end + 1]).lastPathComponent] + words[(end + 2)...]
    }
    return words.joined(separator: " ")
  }

  /// Waits until the started process has exited, without holding a thread of the cooperative pool
  /// (which has one thread per core and runs every other test's tasks): the wait happens on a thread of
  /// its own. When the child is still running after `limit`, it is sent SIGTERM, then SIGKILL after
  /// `grace`, and this throws `ChildProcessTimeout` once it has ended; it never waits longer than
  /// `limit + grace` and the time SIGKILL takes.
  public func exit(within limit: Duration, grace: Duration = .seconds(2)) async throws {
    try await offPool { try self.waitForExit(within: limit, grace: grace) }
  }

  /// Blocks the calling thread until the started process has exited, with the bounds of
  /// `exit(within:grace:)`. Only for code that cannot be asynchronous (a `static let` check, a
  /// `deinit`, a thread of its own): on a task it holds a thread of the cooperative pool.
  public func waitForExit(within limit: Duration, grace: Duration = .seconds(2)) throws {
    try bounded(within: limit, grace: grace) { waitUntilExit() }
  }

  /// Reads `pipe` (the child's standard output or error) to its end and waits for the exit, without
  /// holding a thread of the cooperative pool, with the bounds of `exit(within:grace:)`: a child
  /// killed at the limit closes its end of the pipe, which ends the read.
  public func readToEndAndExit(_ pipe: Pipe, within limit: Duration, grace: Duration = .seconds(2)) async throws
    -> Data
  {
    try await offPool {
      var data = Data()
      try self.bounded(within: limit, grace: grace) {
        data = pipe.fileHandleForReading.readDataToEndOfFile()
        self.waitUntilExit()
      }
      return data
    }
  }

  /// For a `deinit` or a `defer`, which cannot wait: waits for the exit on a thread of its own, with
  /// the bounds of `exit(within:grace:)` (a child still running at the limit is killed), and returns
  /// at once.
  public func exitInBackground(within limit: Duration, grace: Duration = .seconds(2)) {
    Thread { try? self.waitForExit(within: limit, grace: grace) }.start()
  }

  /// Runs `wait`, which returns once the child has exited (it may read the child's pipes to their end
  /// first), on the calling thread, with a watchdog that sends SIGTERM at `limit` and SIGKILL `grace`
  /// later; throws `ChildProcessTimeout` when the watchdog acted. For a thread of its own (`offPool`).
  public func bounded(within limit: Duration, grace: Duration = .seconds(2), _ wait: () -> Void) throws {
    let watchdog = ExitWatchdog()
    let pid = processIdentifier
    let queue = DispatchQueue.global()
    queue.asyncAfter(deadline: .now() + limit.timeInterval) {
      guard watchdog.fire(.terminated) else { return }
      kill(pid, SIGTERM)
      queue.asyncAfter(deadline: .now() + grace.timeInterval) {
        if watchdog.fire(.killed) { kill(pid, SIGKILL) }
      }
    }
    wait()
    if watchdog.finish() { throw ChildProcessTimeout(command: commandLine, limit: limit) }
  }
}

/// Runs `work`, which blocks (it waits for a process, reads a pipe to its end, polls), on a thread of
/// its own and returns what it returns: the cooperative pool, which the other tests' tasks need, is
/// never held while it waits.
public func offPool<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
  try await withCheckedThrowingContinuation { continuation in
    Thread { continuation.resume(with: Result { try work() }) }.start()
  }
}

/// Waits until `condition` holds, checking it every `interval` on a dispatch timer (never on the
/// cooperative pool); returns whether it held before `limit`.
public func eventually(
  within limit: Duration, every interval: Duration = .milliseconds(10), _ condition: @escaping @Sendable () -> Bool
) async -> Bool {
  await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
    let queue = DispatchQueue(label: "eventually")
    let timer = DispatchSource.makeTimerSource(queue: queue)
    let deadline = ContinuousClock.now + limit
    timer.setEventHandler {
      let held = condition()
      guard held || ContinuousClock.now >= deadline else { return }
      timer.cancel()
      continuation.resume(returning: held)
    }
    timer.schedule(deadline: .now(), repeating: interval.timeInterval)
    timer.activate()
  }
}

extension Duration {
  /// The duration in seconds, for Dispatch.
  var timeInterval: Double {
    Double(components.seconds) + Double(components.attoseconds) / 1e18
  }
}

/// Whether a child ended on its own or the watchdog acted first, decided once under a lock.
private final class ExitWatchdog: @unchecked Sendable {
  enum State { case running, terminated, killed, finished }
  private let lock = NSLock()
  private var state = State.running
  private var acted = false

  /// Moves to `next` (SIGTERM, then SIGKILL) unless the child has ended; returns whether to send it.
  func fire(_ next: State) -> Bool {
    lock.withLock {
      guard state != .finished else { return false }
      state = next
      acted = true
      return true
    }
  }

  /// Marks the child ended; returns whether the watchdog had acted.
  func finish() -> Bool {
    lock.withLock {
      state = .finished
      return acted
    }
  }
}
