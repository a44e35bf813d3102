import Dispatch
import Foundation
internal import ReaderCore
import Synchronization

/// Where a session's delegate calls and completion handlers run: its dispatch queue.
///
/// The system waits for each callback to return (`sync`), so what the callback asks of the session
/// is ordered right after it, and a simulated run stays deterministic. A callback already running on
/// the queue (a clock driven from the queue, the main queue driven from the main thread) runs in
/// place instead of deadlocking.
///
/// A session given no queue gets a private serial one, made the first time something runs on it or
/// asks for it: a session that waits in line, or one that has nothing to deliver, costs no queue. Until
/// the app asks for it (`sessionQueue`), only deliveries run on it, so a delivery made from inside
/// another is recognised by its thread, and the queue carries no queue-specific value (whose release
/// would wake a worker thread when the queue is freed). Such a queue goes back to a small pool when its
/// session is freed, and the next session that delivers takes it: it carries no queue-specific value and
/// has run nothing but deliveries, all finished, so nobody can tell it was used before, and a run of
/// sessions one after another makes no queue each. It is held inline by the session, with
/// atomics instead of a lock, so a session costs no object and no lock for it.
struct DeliveryQueue: ~Copyable, Sendable {
  private static let key = DispatchSpecificKey<UInt64>()
  /// The private queues' label: one string for all, so making a queue formats nothing.
  private static let label = "NFCKit.NFCNDEFReaderSession"

  /// The last token handed out; also serializes reading and setting a queue's token.
  private static let tokens = Locked<UInt64>(0)
  /// Private queues of sessions gone, that only deliveries ever ran on, for the next sessions to use.
  private static let spares = Locked<[DispatchQueue]>([])
  private static let maximumSpares = 16
  /// One more such queue, held before the pool (a retained queue's address, 0: none): sessions one
  /// after another hand it on through this word alone, with no lock and no retain or release.
  private static let spare = Atomic<UInt>(0)

  /// The queue once made or given: a retained `DispatchQueue`'s address, 0 until then. Atomic rather
  /// than behind a lock, so a session costs no lock for its queue.
  private let queueAddress: Atomic<UInt>
  /// The queue's token once anyone but the deliveries may run on it (0: not yet).
  private let exposedToken: Atomic<UInt64>
  /// The thread a delivery runs on, while one runs on a private queue nobody else has seen (0: none).
  private let deliveringOn = Atomic<UInt>(0)

  /// Delivers on `queue`, or on a private serial queue when it is `nil`.
  init(_ queue: DispatchQueue?) {
    queueAddress = Atomic(queue.map(Self.retainedAddress) ?? 0)
    exposedToken = Atomic(queue.map(Self.token(of:)) ?? 0)
  }

  deinit {
    let address = queueAddress.load(ordering: .acquiring)
    guard address != 0 else { return }
    let recyclable = exposedToken.load(ordering: .acquiring) == 0
    // The reference this session holds goes to the spare slot as it is, when the slot is free.
    if recyclable {
      let (handedOn, _) = Self.spare.compareExchange(expected: 0, desired: address, ordering: .acquiringAndReleasing)
      if handedOn { return }
    }
    let queue = Self.unmanaged(address).takeRetainedValue()
    if recyclable { Self.recycle(queue) }
  }

  /// The queue callbacks run on; from now on the app may run work on it too.
  var queue: DispatchQueue { resolve(exposing: true).queue }

  /// Runs `body` on the queue and returns when it has run.
  func run(_ body: () -> Void) {
    let (queue, token) = resolve(exposing: false)
    guard let token else {
      // Only deliveries run on this queue: one made from inside another runs in place.
      let thread = Self.currentThread
      let outer = deliveringOn.load(ordering: .relaxed)
      if outer == thread { return body() }
      queue.sync {
        deliveringOn.store(thread, ordering: .relaxed)
        body()
        deliveringOn.store(outer, ordering: .relaxed)
      }
      return
    }
    if DispatchQueue.getSpecific(key: Self.key) == token || (queue === DispatchQueue.main && Thread.isMainThread) {
      body()
    } else {
      queue.sync(execute: body)
    }
  }

  private static var currentThread: UInt {
    #if canImport(Glibc)
      UInt(pthread_self())
    #else
      UInt(bitPattern: pthread_self())
    #endif
  }

  private func resolve(exposing: Bool) -> (queue: DispatchQueue, token: UInt64?) {
    var address = queueAddress.load(ordering: .acquiring)
    if address == 0 {
      let spare = Self.spare.exchange(0, ordering: .acquiringAndReleasing)
      let made =
        spare != 0
        ? spare : Self.retainedAddress(Self.spares.withLock { $0.popLast() } ?? DispatchQueue(label: Self.label))
      let (exchanged, current) = queueAddress.compareExchange(
        expected: 0, desired: made, ordering: .acquiringAndReleasing)
      if exchanged {
        address = made
      } else {
        Self.recycle(Self.unmanaged(made).takeRetainedValue())  // Another thread made one first.
        address = current
      }
    }
    let queue = Self.unmanaged(address).takeUnretainedValue()
    var token = exposedToken.load(ordering: .acquiring)
    if exposing, token == 0 {
      // Setting the token is idempotent (`token(of:)` reads the one already set), so racing threads agree.
      token = Self.token(of: queue)
      exposedToken.store(token, ordering: .releasing)
    }
    return (queue, token == 0 ? nil : token)
  }

  /// Keeps a private queue nobody but the deliveries has run on, for the next session that needs one.
  private static func recycle(_ queue: DispatchQueue) {
    spares.withLock { spares in
      if spares.count < maximumSpares { spares.append(queue) }
    }
  }

  private static func retainedAddress(_ queue: DispatchQueue) -> UInt {
    UInt(bitPattern: Unmanaged.passRetained(queue).toOpaque())
  }

  private static func unmanaged(_ address: UInt) -> Unmanaged<DispatchQueue> {
    // Only ever called with an address `retainedAddress` returned, which is never 0.
    Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: address)!)
  }

  /// The queue's token, set on it the first time it is seen.
  private static func token(of queue: DispatchQueue) -> UInt64 {
    tokens.withLock { last in
      if let token = queue.getSpecific(key: key) { return token }
      last += 1
      queue.setSpecific(key: key, value: last)
      return last
    }
  }
}
