import Dispatch
import Foundation
import NFCKit
import ReaderCore
import ReaderSimulator
import Synchronization

/// Benchmarks NFC reader sessions on the simulator (with no simulated latency, so only the software
/// is measured); every figure is a ratio taken within one round of this run (see `Comparison`) against
/// a bare baseline doing the same amount of work, so runs on different machines compare by their ratios.
///
/// - `lifecycle`: `sessions` sessions, one after another, each begun, made active, invalidated and
///   reported to its delegate; against the same number of steps (four per session: begin, start,
///   polling, invalidate) through a plain FIFO of closures.
/// - `queue`: `queued` sessions begun at once from many threads (`concurrentPerform`) while the system
///   waits, then run through the line — each is invalidated as it becomes active; against the same
///   number of items pushed from the same threads into a lock-guarded FIFO and then popped in order.
///   Run for each size in `queued`: the cost per session must not grow with the length of the line, which
///   the exponent of the cost per session from the smallest line to the largest says (flat is 0).
func runNFCBenchmark(sessions: Int, queued: [Int]) -> [Ratio] {
  let count = max(1, sessions)
  let sizes = queued.map { max(1, $0) }
  var cases: [Comparison.Case] = [
    .init("nfc.lifecycle.sessions") { NFCLifecycle.run(sessions: count) },
    .init("nfc.lifecycle.fifo") { PlainFIFO.run(items: 4 * count) },
  ]
  for size in sizes {
    cases += [
      .init("nfc.queue.\(size).sessions") { NFCLine.run(sessions: size) },
      .init("nfc.queue.\(size).fifo") { PlainFIFO.runConcurrently(items: size) },
    ]
  }
  let timings = Comparison(cases).measure()
  var ratios = [
    timings.ratio(
      "nfc.lifecycle: FIFO / sessions", "nfc.lifecycle.fifo", over: "nfc.lifecycle.sessions", goal: .atLeast(0.1))
  ]
  for size in sizes {
    ratios.append(
      timings.ratio(
        "nfc.queue(\(size)): FIFO / sessions", "nfc.queue.\(size).fifo", over: "nfc.queue.\(size).sessions",
        goal: .atLeast(0.1)))
  }
  if let small = sizes.min(), let large = sizes.max(), small != large {
    let growth = timings.ratio("growth", "nfc.queue.\(large).sessions", over: "nfc.queue.\(small).sessions")
    let exponent = growth.samples.map { log($0 * Double(small) / Double(large)) / log(Double(large) / Double(small)) }
    ratios.append(
      Ratio(
        name: "nfc.queue: cost exponent, \(small) to \(large) sessions", samples: exponent, goal: .atMost(0.05),
        isRatio: false))
  }
  print(
    """
    NFC benchmark: \(BenchOptions.current.rounds) rounds, simulated radio without latency
      lifecycle: \(count) sessions opened and closed one after another, against \(4 * count) steps through a plain FIFO
      queue: \(sizes.map(String.init).joined(separator: " and ")) sessions begun concurrently and run through the \
    line, against as many items through a locked FIFO
    """)
  print(ratios.map(\.line).joined(separator: "\n"))
  return ratios
}

/// Runs the NFC benchmark as `reader-bench nfc` does: 20,000 sessions one after another, and lines of
/// 1,000 and 100,000 sessions begun at once.
func runNFCBenchmarkAndPrint() -> [Ratio] {
  runNFCBenchmark(sessions: 20_000, queued: [1_000, 100_000])
}

/// Sessions one after another: begin, active, invalidate, reported.
private enum NFCLifecycle {
  static func run(sessions: Int) {
    let (system, radio) = NFCReaderSystem.simulated(
      seed: 1, policy: NFCSystemPolicy(sessionTimeout: nil), timing: .instant)
    let delegate = CountingDelegate()
    for _ in 0..<sessions {
      let session = NFCNDEFReaderSession(delegate: delegate, queue: nil, invalidateAfterFirstRead: true, system: system)
      session.begin()
      radio.clock.runUntilIdle()
      session.invalidate()
      radio.clock.runUntilIdle()
    }
    precondition(delegate.ended.load(ordering: .relaxed) == sessions, "every session ended")
  }
}

/// Sessions begun concurrently, then run through the line. Each session is invalidated as it becomes
/// active by an observer of the system's events (no delegate), so the measure is the line itself.
private enum NFCLine {
  static func run(sessions: Int) {
    let (system, radio) = NFCReaderSystem.simulated(
      seed: 1, policy: NFCSystemPolicy(sessionTimeout: nil), timing: .instant)
    let made = (0..<sessions).map { _ in NFCNDEFReaderSession(invalidateAfterFirstRead: true, system: system) }
    let first = made.first?.identifier ?? 0
    let ended = Atomic<Int>(0)
    system.addEventObserver { event in
      switch event.kind {
      case .didBecomeActive: made[Int(event.session - first)].invalidate()
      case .didInvalidate: ended.add(1, ordering: .relaxed)
      default: break
      }
    }
    DispatchQueue.concurrentPerform(iterations: sessions) { made[$0].begin() }
    while ended.load(ordering: .relaxed) < sessions { radio.clock.runUntilIdle() }
    precondition(system.runningSession == nil && system.waitingSessionCount == 0, "the line drained")
  }
}

/// The baselines: closures through a plain FIFO.
private enum PlainFIFO {
  static func run(items: Int) {
    var queue: [() -> Void] = []
    var head = 0
    var done = 0
    for _ in 0..<items { queue.append { done += 1 } }
    while head < queue.count {
      queue[head]()
      head += 1
    }
    precondition(done == items)
  }

  static func runConcurrently(items: Int) {
    let queue = Locked<[@Sendable () -> Void]>([])
    let done = Atomic<Int>(0)
    DispatchQueue.concurrentPerform(iterations: items) { _ in
      queue.withLock { $0.append { done.add(1, ordering: .relaxed) } }
    }
    let work = queue.withLock { $0 }
    for item in work { item() }
    precondition(done.load(ordering: .relaxed) == items)
  }
}

private final class CountingDelegate: NFCNDEFReaderSessionDelegate {
  let ended = Atomic<Int>(0)
  let invalidatesWhenActive: Bool

  init(invalidatesWhenActive: Bool = false) { self.invalidatesWhenActive = invalidatesWhenActive }

  func readerSessionDidBecomeActive(_ session: NFCNDEFReaderSession) {
    if invalidatesWhenActive { session.invalidate() }
  }

  func readerSession(_ session: NFCNDEFReaderSession, didInvalidateWithError error: any Error) {
    ended.add(1, ordering: .relaxed)
  }

  func readerSession(_ session: NFCNDEFReaderSession, didDetectNDEFs messages: [NFCNDEFMessage]) {}
}
