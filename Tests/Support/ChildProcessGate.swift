import Foundation

/// A counting semaphore for tasks that run child processes: `withPermit` waits, without holding a
/// thread, until one of `width` permits is free, so that the tests, which wait for their children off
/// the cooperative pool and so no longer take turns on its threads, do not start a hundred children
/// on two cores at once (each would then take many times its usual time). Permits go in the order
/// they were asked for.
public actor ChildProcessGate {
  /// The gate the `readerctl` runs share: as many children at once as the machine has cores.
  public static let shared = ChildProcessGate(width: max(2, ProcessInfo.processInfo.activeProcessorCount))

  private var available: Int
  private var waiters: [CheckedContinuation<Void, Never>] = []

  public init(width: Int) { available = width }

  /// Waits for a permit.
  public func acquire() async {
    if available > 0 {
      available -= 1
      return
    }
    await withCheckedContinuation { waiters.append($0) }
  }

  /// Gives a permit back, to the longest waiter if there is one.
  public func release() {
    if waiters.isEmpty {
      available += 1
    } else {
      waiters.removeFirst().resume()
    }
  }

  /// Runs `body` holding a permit, and gives it back however `body` ends.
  public nonisolated func withPermit<Value>(_ body: () async throws -> Value) async rethrows -> Value {
    await acquire()
    do {
      let value = try await body()
      await release()
      return value
    } catch {
      await release()
      throw error
    }
  }
}
