import Dispatch
import Foundation
internal import ReaderCore

/// Where a session's delegate calls and completion handlers run: its dispatch queue.
///
/// The system waits for each callback to return (`sync`), so what the callback asks of the session
/// is ordered right after it, and a simulated run stays deterministic. A callback already running on
/// the queue (a clock driven from the queue, the main queue driven from the main thread) runs in
/// place instead of deadlocking.
struct DeliveryQueue: Sendable {
  private static let key = DispatchSpecificKey<UInt64>()
  /// The last token handed out; also serializes reading and setting a queue's token.
  private static let tokens = Locked<UInt64>(0)

  let queue: DispatchQueue
  private let token: UInt64

  /// Delivers on `queue`, or on a new private serial queue when it is `nil`.
  init(_ queue: DispatchQueue?, label: String) {
    let queue = queue ?? DispatchQueue(label: label)
    token = Self.tokens.withLock { last in
      if let token = queue.getSpecific(key: Self.key) { return token }
      last += 1
      queue.setSpecific(key: Self.key, value: last)
      return last
    }
    self.queue = queue
  }

  /// Runs `body` on the queue and returns when it has run.
  func run(_ body: () -> Void) {
    if DispatchQueue.getSpecific(key: Self.key) == token || (queue === DispatchQueue.main && Thread.isMainThread) {
      body()
    } else {
      queue.sync(execute: body)
    }
  }
}
